#pragma once
// Wider lanes where the CPU has them. Builds target plain x86-64 (SSE2, 4
// floats a vector), so GCC also compiles the marked loops for x86-64-v3
// (AVX2 and FMA, 8 floats) and the loader picks one (an ifunc): measured
// 1.5x on a 19x19 filter in the cpu variant's tap loops. Elsewhere the
// loops are built for the target as it is. For plain (non-template,
// non-inline) functions only.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#define CUDACONV_WIDE_LANES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define CUDACONV_WIDE_LANES
#endif
