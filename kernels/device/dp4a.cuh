#pragma once
// The integer path's arithmetic (fast's strip and register paths): u8
// samples gathered into words, summed with integer taps by DP4A, and
// clamped back into bytes.
#include <cuda_runtime.h>

namespace cudaconv {

// The integer path: u8 samples and integer taps in [-128, 127]
// (strips_dp4a_words), summed exactly in 32-bit integers. One DP4A adds the
// products of a word's 4 unsigned bytes and 4 signed taps to a sum, where
// the float path takes 4 FFMAs and a PRMT and FADD a sample to turn bytes
// into floats (on the float path RGB u8 edge is bound by those
// instructions: ncu).
__device__ __forceinline__ int dp4a_u8_s8(unsigned int samples, int taps, int sum) {
    int out;
    asm("dp4a.u32.s32 %0, %1, %2, %3;" : "=r"(out) : "r"(samples), "r"(taps), "r"(sum));
    return out;
}

// Window bytes first, first + C, ..., first + (n - 1) C (n <= 4) as bytes
// 0 ... n - 1 of one word, for DP4A: one PRMT where they lie in two
// neighbouring words, two or three where they reach further (RGB's 3x3
// taps span 7 bytes, RGBA's 9). Bytes n ... 3 are whatever is at hand:
// their taps are 0. `first` and `n` are constants once the caller's loops
// are unrolled, and so is every selector.
template <int C>
__device__ __forceinline__ unsigned int gather_bytes(const unsigned int* words, int first, int n) {
    const int lo = first / 4;
    const int last = (first + (n - 1) * C) / 4;
    unsigned int near_selector = 0;  // the bytes in words lo and lo + 1, in their places
#pragma unroll
    for (int c = 0; c < 4; ++c) {
        const int b = first + c * C;
        if (c < n && b / 4 <= lo + 1)
            near_selector |= static_cast<unsigned int>(b - 4 * lo) << (4 * c);
    }
    const unsigned int near = __byte_perm(words[lo], words[last > lo ? lo + 1 : lo], near_selector);
    if (last <= lo + 1) return near;
    // The rest lie in words lo + 2 and lo + 3.
    const int hi = lo + 2;
    unsigned int far_selector = 0;  // from words hi, hi + 1 into their places
    unsigned int merge = 0;         // near's bytes, or the far word's
#pragma unroll
    for (int c = 0; c < 4; ++c) {
        const int b = first + c * C;
        if (c >= n || b / 4 <= lo + 1) {
            merge |= static_cast<unsigned int>(c) << (4 * c);
        } else if (last == hi) {
            merge |= static_cast<unsigned int>(4 + b - 4 * hi) << (4 * c);
        } else {
            far_selector |= static_cast<unsigned int>(b - 4 * hi) << (4 * c);
            merge |= static_cast<unsigned int>(4 + c) << (4 * c);
        }
    }
    const unsigned int far = last == hi ? words[hi]
                                        : __byte_perm(words[hi], words[hi + 1], far_selector);
    return __byte_perm(near, far, merge);
}

// Four ints clamped to 0...255 as the bytes of a word, v0 lowest: one
// cvt.pack.sat makes v3 and v2 the low half of a word, the second shifts
// that up and packs v1 and v0 below it.
__device__ __forceinline__ unsigned int pack_saturated_u8(int v0, int v1, int v2, int v3) {
    unsigned int high, word;
    asm("cvt.pack.sat.u8.s32.b32 %0, %1, %2, 0;" : "=r"(high) : "r"(v3), "r"(v2));
    asm("cvt.pack.sat.u8.s32.b32 %0, %1, %2, %3;" : "=r"(word) : "r"(v1), "r"(v0), "r"(high));
    return word;
}

}  // namespace cudaconv
