#pragma once
// Finishing and storing a vector of outputs in the output's depth: shared
// by fast's tile and strip paths (kernels/fast/fast.cu, kernels/fast/fast_strips.cu).
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "core/types.hpp"

namespace cudaconv {

template <int Bytes>
__device__ __forceinline__ void store_vector(std::byte* dst, const void* src) {
    if constexpr (Bytes % 16 == 0) {
#pragma unroll
        for (int i = 0; i < Bytes / 16; ++i) {
            reinterpret_cast<uint4*>(dst)[i] = reinterpret_cast<const uint4*>(src)[i];
        }
    } else if constexpr (Bytes == 8) {
        *reinterpret_cast<uint2*>(dst) = *reinterpret_cast<const uint2*>(src);
    } else {
        static_assert(Bytes == 4, "a vector store of 4, 8 or 16n bytes");
        *reinterpret_cast<unsigned int*>(dst) = *reinterpret_cast<const unsigned int*>(src);
    }
}

// saturate_to's rounding (half to even, NaN to 0, clamped) in one
// conversion instruction: PTX's cvt.rni to an unsigned integer already
// clamps negatives and NaN to 0, so only the top needs a min. saturate_to
// itself takes a rint, compares and a conversion per sample.
template <typename Out>
__device__ __forceinline__ Out to_output(float v) {
    if constexpr (std::is_same_v<Out, float>) return v;
    else return static_cast<Out>(min(__float2uint_rn(v), sizeof(Out) == 1 ? 255u : 65535u));
}

// S finished samples to the output depth, stored as one vector.
template <typename Out, int S>
__device__ __forceinline__ void store_samples(std::byte* dst, const float* values) {
    alignas(16) Out packed[S];
#pragma unroll
    for (int s = 0; s < S; ++s) packed[s] = to_output<Out>(values[s]);
    store_vector<S* static_cast<int>(sizeof(Out))>(dst, packed);
}

// S finished samples of a row to the output's depth, at sample k of the
// output row that starts at row: the whole-vector store of fast's paths.
template <int S>
__device__ __forceinline__ void store_samples_in(Depth depth, std::byte* row, std::int64_t k,
                                                 const float* values) {
    switch (depth) {
        case Depth::u8: store_samples<std::uint8_t, S>(row + k, values); break;
        case Depth::u16: store_samples<std::uint16_t, S>(row + 2 * k, values); break;
        case Depth::f32: store_samples<float, S>(row + 4 * k, values); break;
    }
}

// The integer finish without a conversion instruction, for jobs where
// delta + kRoundingMagic is a float (fast_strips.cu's launch_one checks it
// into BandGrid::magic_finish): one FFMA gives
// scale * sum + delta + 1.5 * 2^23 rounded once, to nearest with ties to
// even; while |scale * sum + delta| < 2^22 that float's low mantissa bits
// are the rounded value (its ulp is 1), and past that it lies beyond the
// clamp below on the same side. Clamping the float between magic and
// magic + max clamps the integer, and NaN goes to 0 (fmaxf takes the
// number), as saturate_to does. The samples' low bytes are then packed
// with PRMT: FFMA, 2 FMNMX and 3/4 or 1/2 PRMT a sample, all at full rate,
// where cvt.rni (F2I) runs at a quarter rate.
constexpr float kRoundingMagic = 12582912.0f;  // 1.5 * 2^23

template <typename Out>
__device__ __forceinline__ unsigned int magic_clamp(float w) {
    constexpr float kMax = sizeof(Out) == 1 ? 255.0f : 65535.0f;
    return __float_as_uint(fminf(fmaxf(w, kRoundingMagic), kRoundingMagic + kMax));
}

// The low byte (u8) or half (u16) of each of S words, packed with PRMT
// and stored as one vector: the words hold finished samples already
// clamped to the output's range.
template <typename Out, int S>
__device__ __forceinline__ void store_low_parts(std::byte* dst, const unsigned int* bits) {
    constexpr int kWords = S * static_cast<int>(sizeof(Out)) / 4;
    alignas(16) unsigned int words[kWords];
#pragma unroll
    for (int w = 0; w < kWords; ++w) {
        if constexpr (sizeof(Out) == 1) {
            const unsigned int lo = __byte_perm(bits[4 * w], bits[4 * w + 1], 0x0040u);
            const unsigned int hi = __byte_perm(bits[4 * w + 2], bits[4 * w + 3], 0x0040u);
            words[w] = __byte_perm(lo, hi, 0x5410u);
        } else {
            words[w] = __byte_perm(bits[2 * w], bits[2 * w + 1], 0x5410u);
        }
    }
    store_vector<kWords * 4>(dst, words);
}

// S sums finished as above and stored as one vector of u8 or u16.
template <typename Out, int S>
__device__ __forceinline__ void store_samples_magic(std::byte* dst, const float* sums, float scale,
                                                    float delta, bool take_abs) {
    static_assert(sizeof(Out) <= 2 && S % 4 == 0, "u8 or u16 outputs, whole words");
    unsigned int bits[S];
    // One branch for the vector, not a select a sample: both ways would
    // otherwise be computed.
    if (take_abs) {
#pragma unroll
        for (int s = 0; s < S; ++s) {
            bits[s] = magic_clamp<Out>(fabsf(fmaf(sums[s], scale, delta)) + kRoundingMagic);
        }
    } else {
        const float delta_magic = delta + kRoundingMagic;
#pragma unroll
        for (int s = 0; s < S; ++s) bits[s] = magic_clamp<Out>(fmaf(sums[s], scale, delta_magic));
    }
    store_low_parts<Out, S>(dst, bits);
}

}  // namespace cudaconv
