#pragma once
// The run-time choice of Highway target shared by the cpu variant's vector
// files (simd_rows.cpp, simd_int16.cpp): each compiles its functions once
// per x86 target and calls the best one this CPU runs, chosen once for the
// process. Include after <hwy/highway.h>, in a file's HWY_ONCE part.
#include <cstddef>

namespace cudaconv {

// The entry of a dispatch table (below) for this CPU: Highway's rule, the
// best target both compiled here and run by the CPU, else the fallback
// (the table's last entry). Defined in simd_rows.cpp.
std::size_t simd_target_index();

}  // namespace cudaconv

// HWY_EXPORT's table less its first entry, which would ask libhwy.so to
// choose on the first call (simd_rows.cpp says why the binary avoids it):
// one pointer for each target Highway knows (nullptr where not compiled
// here), then the fallback. Call NAME##Table[simd_target_index()].
#define CUDACONV_DISPATCH_TABLE(NAME)                                                       \
    decltype(&HWY_STATIC_DISPATCH(NAME)) const NAME##Table[HWY_MAX_DYNAMIC_TARGETS + 2] = { \
        nullptr, HWY_CHOOSE_TARGET_LIST(NAME), HWY_CHOOSE_FALLBACK(NAME)}
