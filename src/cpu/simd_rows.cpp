// Highway compiles this file once for each x86 target it knows (through
// foreach_target.h, which includes the file again per target); the
// functions at the end call the best one the CPU runs (HWY_DYNAMIC_DISPATCH,
// chosen on the first call). So one binary uses AVX-512 where present,
// AVX2 elsewhere, and SSE on the oldest x86-64.
#include "cpu/simd_rows.hpp"

#include <cmath>
#include <limits>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/simd_rows.cpp"
#include <hwy/foreach_target.h>  // must come before highway.h
#include <hwy/highway.h>

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

}  // namespace HWY_NAMESPACE
}  // namespace cudaconv
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cudaconv {

HWY_EXPORT(WidenU8);
HWY_EXPORT(WidenU16);
HWY_EXPORT(CorrelatePass);
HWY_EXPORT(MultiplySpectra);
HWY_EXPORT(FinishU8);
HWY_EXPORT(FinishU16);

void widen_row(const std::uint8_t* src, std::int64_t n, float* dst) {
    HWY_DYNAMIC_DISPATCH(WidenU8)(src, n, dst);
}

void widen_row(const std::uint16_t* src, std::int64_t n, float* dst) {
    HWY_DYNAMIC_DISPATCH(WidenU16)(src, n, dst);
}

void correlate_taps(const float* const* sources, const float* weights, std::size_t taps,
                    std::int64_t n, float* sums) {
    PassTaps singles;
    singles.single_sources = sources;
    singles.single_weights = weights;
    singles.singles = taps;
    HWY_DYNAMIC_DISPATCH(CorrelatePass)(singles, n, sums);
}

void correlate_pass(const PassTaps& pass, std::int64_t n, float* sums) {
    HWY_DYNAMIC_DISPATCH(CorrelatePass)(pass, n, sums);
}

void finish_unscaled(const float* sums, std::int64_t n, bool take_abs, std::uint8_t* out) {
    HWY_DYNAMIC_DISPATCH(FinishU8)(sums, n, take_abs, out);
}

void finish_unscaled(const float* sums, std::int64_t n, bool take_abs, std::uint16_t* out) {
    HWY_DYNAMIC_DISPATCH(FinishU16)(sums, n, take_abs, out);
}

void multiply_spectra(double* z, const double* f, std::int64_t n) {
    HWY_DYNAMIC_DISPATCH(MultiplySpectra)(z, f, n);
}

}  // namespace cudaconv
#endif  // HWY_ONCE
