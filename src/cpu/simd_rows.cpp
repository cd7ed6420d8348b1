// Highway compiles this file once for each x86 target it knows (through
// foreach_target.h, which includes the file again per target); the
// functions at the end call the best one the CPU runs, chosen once. So one
// binary uses AVX-512 where present, AVX2 elsewhere, and SSE on the oldest
// x86-64.
#include "cpu/simd_rows.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/simd_rows.cpp"
#include <hwy/foreach_target.h>  // must come before highway.h
#include <hwy/highway.h>

#include "cpu/simd_dispatch.hpp"

HWY_BEFORE_NAMESPACE();
namespace cudaconv {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <typename T>
void WidenRow(const T* HWY_RESTRICT src, std::int64_t n, float* HWY_RESTRICT dst) {
    const hn::ScalableTag<float> df;
    const hn::RebindToSigned<decltype(df)> di;
    const hn::Rebind<T, decltype(df)> dn;  // as many T lanes as df has floats
    const auto lanes = static_cast<std::int64_t>(hn::Lanes(df));
    std::int64_t k = 0;
    for (; k + lanes <= n; k += lanes) {
        hn::StoreU(hn::ConvertTo(df, hn::PromoteTo(di, hn::LoadU(dn, src + k))), df, dst + k);
    }
    for (; k < n; ++k) dst[k] = static_cast<float>(src[k]);
}

void WidenU8(const std::uint8_t* src, std::int64_t n, float* dst) { WidenRow(src, n, dst); }
void WidenU16(const std::uint16_t* src, std::int64_t n, float* dst) { WidenRow(src, n, dst); }

// Four vectors of sums an iteration, each held in a register across every
// tap: four independent multiply-add chains, where one would wait out each
// multiply-add's latency. A tap costs a broadcast, four loads (eight for a
// pair of taps of one weight, summed first) and four multiply-adds, and
// each sum is stored once.
void CorrelatePass(const PassTaps& pass, std::int64_t n, float* HWY_RESTRICT sums) {
    const hn::ScalableTag<float> d;
    const auto lanes = static_cast<std::int64_t>(hn::Lanes(d));
    const auto pair = [&](std::size_t t, std::int64_t k) HWY_ATTR {
        return hn::Add(hn::LoadU(d, pass.pair_first[t] + k), hn::LoadU(d, pass.pair_second[t] + k));
    };
    std::int64_t k = 0;
    for (; k + 4 * lanes <= n; k += 4 * lanes) {
        auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
        for (std::size_t t = 0; t < pass.pairs; ++t) {
            const auto w = hn::Set(d, pass.pair_weights[t]);
            a0 = hn::MulAdd(w, pair(t, k), a0);
            a1 = hn::MulAdd(w, pair(t, k + lanes), a1);
            a2 = hn::MulAdd(w, pair(t, k + 2 * lanes), a2);
            a3 = hn::MulAdd(w, pair(t, k + 3 * lanes), a3);
        }
        for (std::size_t t = 0; t < pass.singles; ++t) {
            const auto w = hn::Set(d, pass.single_weights[t]);
            const float* s = pass.single_sources[t] + k;
            a0 = hn::MulAdd(w, hn::LoadU(d, s), a0);
            a1 = hn::MulAdd(w, hn::LoadU(d, s + lanes), a1);
            a2 = hn::MulAdd(w, hn::LoadU(d, s + 2 * lanes), a2);
            a3 = hn::MulAdd(w, hn::LoadU(d, s + 3 * lanes), a3);
        }
        hn::StoreU(a0, d, sums + k);
        hn::StoreU(a1, d, sums + k + lanes);
        hn::StoreU(a2, d, sums + k + 2 * lanes);
        hn::StoreU(a3, d, sums + k + 3 * lanes);
    }
    for (; k < n; k += lanes) {  // n is a multiple of kRowChunk, so of lanes
        auto a = hn::Zero(d);
        for (std::size_t t = 0; t < pass.pairs; ++t) {
            a = hn::MulAdd(hn::Set(d, pass.pair_weights[t]), pair(t, k), a);
        }
        for (std::size_t t = 0; t < pass.singles; ++t) {
            a = hn::MulAdd(hn::Set(d, pass.single_weights[t]),
                           hn::LoadU(d, pass.single_sources[t] + k), a);
        }
        hn::StoreU(a, d, sums + k);
    }
}

// finish_row's integer outputs with scale 1 and delta 0: |.| where asked,
// clamped to [0, max] (a NaN fails v > 0 and becomes 0), rounded half to
// even (NearestInt, the CPU's default rounding), narrowed.
template <typename Out, bool kAbs>
void FinishUnscaled(const float* HWY_RESTRICT sums, std::int64_t n, Out* HWY_RESTRICT out) {
    constexpr float kMax = static_cast<float>(std::numeric_limits<Out>::max());
    const hn::ScalableTag<float> df;
    const hn::Rebind<Out, decltype(df)> dout;
    const auto zero = hn::Zero(df);
    const auto top = hn::Set(df, kMax);
    const auto lanes = static_cast<std::int64_t>(hn::Lanes(df));
    std::int64_t k = 0;
    for (; k + lanes <= n; k += lanes) {
        auto v = hn::LoadU(df, sums + k);
        if (kAbs) v = hn::Abs(v);
        v = hn::Min(hn::IfThenElseZero(hn::Gt(v, zero), v), top);
        hn::StoreU(hn::DemoteTo(dout, hn::NearestInt(v)), dout, out + k);
    }
    for (; k < n; ++k) {
        float v = kAbs ? std::fabs(sums[k]) : sums[k];
        v = v > 0.0f ? v : 0.0f;
        v = v < kMax ? v : kMax;
        out[k] = static_cast<Out>(std::nearbyint(v));
    }
}

void FinishU8(const float* sums, std::int64_t n, bool take_abs, std::uint8_t* out) {
    take_abs ? FinishUnscaled<std::uint8_t, true>(sums, n, out)
             : FinishUnscaled<std::uint8_t, false>(sums, n, out);
}

void FinishU16(const float* sums, std::int64_t n, bool take_abs, std::uint16_t* out) {
    take_abs ? FinishUnscaled<std::uint16_t, true>(sums, n, out)
             : FinishUnscaled<std::uint16_t, false>(sums, n, out);
}

void MultiplySpectra(double* HWY_RESTRICT z, const double* HWY_RESTRICT f, std::int64_t n) {
    const hn::ScalableTag<double> d;
    const auto lanes = static_cast<std::int64_t>(hn::Lanes(d));
    std::int64_t k = 0;
    for (; k + lanes <= n; k += lanes) {
        hn::Vec<decltype(d)> zr, zi, fr, fi;
        hn::LoadInterleaved2(d, z + 2 * k, zr, zi);
        hn::LoadInterleaved2(d, f + 2 * k, fr, fi);
        const auto re = hn::MulSub(zr, fr, hn::Mul(zi, fi));
        const auto im = hn::MulAdd(zr, fi, hn::Mul(zi, fr));
        hn::StoreInterleaved2(re, im, d, z + 2 * k);
    }
    for (; k < n; ++k) {
        const double re = z[2 * k] * f[2 * k] - z[2 * k + 1] * f[2 * k + 1];
        const double im = z[2 * k] * f[2 * k + 1] + z[2 * k + 1] * f[2 * k];
        z[2 * k] = re;
        z[2 * k + 1] = im;
    }
}

// Six pixels by two vectors of output channels: twelve sums in registers,
// which a weight pair and six broadcasts feed per input channel (load
// ports and multiply-add ports both kept near their limit on AVX2).
void LayerPixels(const float* const* HWY_RESTRICT sources, std::size_t taps, std::int64_t cin,
                 const float* HWY_RESTRICT weights, const float* HWY_RESTRICT bias,
                 std::int64_t cout_pad, float* HWY_RESTRICT out) {
    static_assert(kLayerPixels == 6, "the sums below are written out for six pixels");
    const hn::ScalableTag<float> d;
    const auto lanes = static_cast<std::int64_t>(hn::Lanes(d));
    for (std::int64_t co = 0; co < cout_pad; co += 2 * lanes) {
        const auto b0 = hn::LoadU(d, bias + co);
        const auto b1 = hn::LoadU(d, bias + co + lanes);
        auto a0 = b0, a1 = b0, a2 = b0, a3 = b0, a4 = b0, a5 = b0;
        auto c0 = b1, c1 = b1, c2 = b1, c3 = b1, c4 = b1, c5 = b1;
        for (std::size_t t = 0; t < taps; ++t) {
            const float* const* s = sources + t * kLayerPixels;
            const float* w = weights + static_cast<std::int64_t>(t) * cin * cout_pad + co;
            for (std::int64_t ci = 0; ci < cin; ++ci, w += cout_pad) {
                const auto w0 = hn::LoadU(d, w);
                const auto w1 = hn::LoadU(d, w + lanes);
                auto v = hn::Set(d, s[0][ci]);
                a0 = hn::MulAdd(v, w0, a0);
                c0 = hn::MulAdd(v, w1, c0);
                v = hn::Set(d, s[1][ci]);
                a1 = hn::MulAdd(v, w0, a1);
                c1 = hn::MulAdd(v, w1, c1);
                v = hn::Set(d, s[2][ci]);
                a2 = hn::MulAdd(v, w0, a2);
                c2 = hn::MulAdd(v, w1, c2);
                v = hn::Set(d, s[3][ci]);
                a3 = hn::MulAdd(v, w0, a3);
                c3 = hn::MulAdd(v, w1, c3);
                v = hn::Set(d, s[4][ci]);
                a4 = hn::MulAdd(v, w0, a4);
                c4 = hn::MulAdd(v, w1, c4);
                v = hn::Set(d, s[5][ci]);
                a5 = hn::MulAdd(v, w0, a5);
                c5 = hn::MulAdd(v, w1, c5);
            }
        }
        float* o = out + co;
        hn::StoreU(a0, d, o);
        hn::StoreU(c0, d, o + lanes);
        hn::StoreU(a1, d, o + cout_pad);
        hn::StoreU(c1, d, o + cout_pad + lanes);
        hn::StoreU(a2, d, o + 2 * cout_pad);
        hn::StoreU(c2, d, o + 2 * cout_pad + lanes);
        hn::StoreU(a3, d, o + 3 * cout_pad);
        hn::StoreU(c3, d, o + 3 * cout_pad + lanes);
        hn::StoreU(a4, d, o + 4 * cout_pad);
        hn::StoreU(c4, d, o + 4 * cout_pad + lanes);
        hn::StoreU(a5, d, o + 5 * cout_pad);
        hn::StoreU(c5, d, o + 5 * cout_pad + lanes);
    }
}

}  // namespace HWY_NAMESPACE
}  // namespace cudaconv
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cudaconv {
namespace {

// The Highway targets this CPU runs, told by the compiler's CPU check
// (__builtin_cpu_supports, which also asks whether the OS saves the vector
// registers), each with every feature Highway 1.0's own check requires of
// it. In place of hwy::SupportedTargets(): that is in libhwy.so, whose
// load-time timer calibration costs every process about 7 ms, so the
// binary uses Highway's headers only. tests/unit/test_simd_targets.cpp
// holds the two checks to the same answer.
std::int64_t detect_targets() {
    __builtin_cpu_init();
    const auto all = [](std::initializer_list<bool> features) {
        return std::all_of(features.begin(), features.end(), [](bool f) { return f; });
    };
    const bool ssse3 =
        all({__builtin_cpu_supports("sse2") != 0, __builtin_cpu_supports("sse3") != 0,
             __builtin_cpu_supports("ssse3") != 0});
    const bool sse4 =
        ssse3 && all({__builtin_cpu_supports("sse4.1") != 0, __builtin_cpu_supports("sse4.2") != 0,
                      __builtin_cpu_supports("pclmul") != 0, __builtin_cpu_supports("aes") != 0});
    const bool avx2 = sse4 &&
                      all({__builtin_cpu_supports("avx") != 0, __builtin_cpu_supports("avx2") != 0,
                           __builtin_cpu_supports("fma") != 0, __builtin_cpu_supports("f16c") != 0,
                           __builtin_cpu_supports("bmi") != 0, __builtin_cpu_supports("bmi2") != 0,
                           __builtin_cpu_supports("lzcnt") != 0});
    const bool avx3 =
        avx2 &&
        all({__builtin_cpu_supports("avx512f") != 0, __builtin_cpu_supports("avx512vl") != 0,
             __builtin_cpu_supports("avx512dq") != 0, __builtin_cpu_supports("avx512bw") != 0});
    return (ssse3 ? HWY_SSSE3 : 0) | (sse4 ? HWY_SSE4 : 0) | (avx2 ? HWY_AVX2 : 0) |
           (avx3 ? HWY_AVX3 : 0);
}

// The dispatch tables (cpu/simd_dispatch.hpp).
CUDACONV_DISPATCH_TABLE(WidenU8);
CUDACONV_DISPATCH_TABLE(WidenU16);
CUDACONV_DISPATCH_TABLE(CorrelatePass);
CUDACONV_DISPATCH_TABLE(LayerPixels);
CUDACONV_DISPATCH_TABLE(MultiplySpectra);
CUDACONV_DISPATCH_TABLE(FinishU8);
CUDACONV_DISPATCH_TABLE(FinishU16);

}  // namespace

std::int64_t simd_targets() { return detect_targets(); }

std::size_t simd_target_index() {
    static const std::size_t index = [] {
        hwy::ChosenTarget chosen;
        chosen.Update(detect_targets());
        return chosen.GetIndex();
    }();
    return index;
}

void widen_row(const std::uint8_t* src, std::int64_t n, float* dst) {
    WidenU8Table[simd_target_index()](src, n, dst);
}

void widen_row(const std::uint16_t* src, std::int64_t n, float* dst) {
    WidenU16Table[simd_target_index()](src, n, dst);
}

void correlate_taps(const float* const* sources, const float* weights, std::size_t taps,
                    std::int64_t n, float* sums) {
    PassTaps singles;
    singles.single_sources = sources;
    singles.single_weights = weights;
    singles.singles = taps;
    CorrelatePassTable[simd_target_index()](singles, n, sums);
}

void correlate_pass(const PassTaps& pass, std::int64_t n, float* sums) {
    CorrelatePassTable[simd_target_index()](pass, n, sums);
}

void finish_unscaled(const float* sums, std::int64_t n, bool take_abs, std::uint8_t* out) {
    FinishU8Table[simd_target_index()](sums, n, take_abs, out);
}

void finish_unscaled(const float* sums, std::int64_t n, bool take_abs, std::uint16_t* out) {
    FinishU16Table[simd_target_index()](sums, n, take_abs, out);
}

void multiply_spectra(double* z, const double* f, std::int64_t n) {
    MultiplySpectraTable[simd_target_index()](z, f, n);
}

void layer_pixels(const float* const* sources, std::size_t taps, std::int64_t cin,
                  const float* weights, const float* bias, std::int64_t cout_pad, float* out) {
    LayerPixelsTable[simd_target_index()](sources, taps, cin, weights, bias, cout_pad, out);
}

}  // namespace cudaconv
#endif  // HWY_ONCE
