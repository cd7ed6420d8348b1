#pragma once
// TF32 on the tensor cores, shared by the kernels that multiply in it
// (fast's dense path, the mma layer): the rounding of a float to TF32 and
// one mma.sync m16n8k8.
#include <cuda_runtime.h>

namespace cudaconv {

// tf32_round's arithmetic, the bits cvt.rna.tf32.f32 gives for a finite v,
// in 2 instructions: ptxas turns the conversion into 4 to 5, as it also
// keeps infinities and NaN (fast's staging sends those to its float path;
// for the mma layer docs/SPEC.md states what they and values within 2^-12
// of float's largest give). Splitting a float into hi + lo with it twice
// keeps float32's precision in two TF32 parts (3xTF32).
__device__ __forceinline__ float tf32_rna(float v) {
    return __uint_as_float((__float_as_uint(v) + 0x1000u) & ~0x1fffu);
}

// d += a (16 x 8, row fragment) * b (8 x 8, column fragment).
// TF32 mma needs compute capability 8.0; a build for older GPUs compiles a
// trap in its place, and the callers refuse those devices.
__device__ __forceinline__ void mma_tf32(float (&d)[4], const float (&a)[4], float b0, float b1) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(__float_as_uint(a[0])), "r"(__float_as_uint(a[1])), "r"(__float_as_uint(a[2])),
          "r"(__float_as_uint(a[3])), "r"(__float_as_uint(b0)), "r"(__float_as_uint(b1)));
#else
    __trap();
#endif
}

}  // namespace cudaconv
