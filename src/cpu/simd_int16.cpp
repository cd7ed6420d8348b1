// The integer path's loops (cpu/simd_int16.hpp), compiled once for each
// x86 target Highway knows and dispatched at run time, as simd_rows.cpp.
#include "cpu/simd_int16.hpp"

#include <cstring>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/simd_int16.cpp"
#include <hwy/foreach_target.h>  // must come before highway.h
#include <hwy/highway.h>

#include "cpu/simd_dispatch.hpp"

HWY_BEFORE_NAMESPACE();
namespace cudaconv {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void WidenU8ToI16(const std::uint8_t* HWY_RESTRICT src, std::int64_t n,
                  std::int16_t* HWY_RESTRICT dst) {
    const hn::ScalableTag<std::int16_t> d;
    const hn::Rebind<std::uint8_t, decltype(d)> d8;  // as many u8 lanes as d has int16
    const auto lanes = static_cast<std::int64_t>(hn::Lanes(d));
    std::int64_t k = 0;
    for (; k + lanes <= n; k += lanes) {
        hn::StoreU(hn::PromoteTo(d, hn::LoadU(d8, src + k)), d, dst + k);
    }
    for (; k < n; ++k) dst[k] = static_cast<std::int16_t>(src[k]);
}

// Four vectors of sums an iteration, as simd_rows.cpp's CorrelatePass:
// four independent chains. Each sum starts at delta, so the finish is |.|
// where asked and one saturating narrowing (negative to 0, past 255 to
// 255), with nothing to round: the sums are integers.
template <bool kAbs>
void CorrelateToU8(const Int16Taps& taps, std::int16_t delta, std::int64_t n,
                   std::uint8_t* HWY_RESTRICT out) {
    const hn::ScalableTag<std::int16_t> d;
    const hn::Rebind<std::uint8_t, decltype(d)> d8;
    using V = hn::Vec<decltype(d)>;
    const auto lanes = static_cast<std::int64_t>(hn::Lanes(d));
    const auto narrow = [&](V v) HWY_ATTR {
        if (kAbs) v = hn::Abs(v);
        return hn::DemoteTo(d8, v);
    };
    // The last, partial block is written here, then its n - k bytes copied:
    // 4 vectors of int16 lanes at the widest (AVX-512) are 128 bytes.
    HWY_ALIGN std::uint8_t tail[4 * HWY_MAX_BYTES / sizeof(std::int16_t)];
    for (std::int64_t k = 0; k < n; k += 4 * lanes) {
        V a0 = hn::Set(d, delta), a1 = a0, a2 = a0, a3 = a0;
        std::size_t t = 0;
        for (std::size_t g = 0; g < taps.groups; ++g) {
            // Magnitude 1 goes straight into the sums; any other is summed
            // apart, then multiplied once.
            const bool unit = taps.magnitudes[g] == 1;
            V s0 = unit ? a0 : hn::Zero(d), s1 = unit ? a1 : hn::Zero(d);
            V s2 = unit ? a2 : hn::Zero(d), s3 = unit ? a3 : hn::Zero(d);
            for (; t < taps.plus_end[g]; ++t) {
                const std::int16_t* s = taps.sources[t] + k;
                s0 = hn::Add(s0, hn::LoadU(d, s));
                s1 = hn::Add(s1, hn::LoadU(d, s + lanes));
                s2 = hn::Add(s2, hn::LoadU(d, s + 2 * lanes));
                s3 = hn::Add(s3, hn::LoadU(d, s + 3 * lanes));
            }
            for (; t < taps.end[g]; ++t) {
                const std::int16_t* s = taps.sources[t] + k;
                s0 = hn::Sub(s0, hn::LoadU(d, s));
                s1 = hn::Sub(s1, hn::LoadU(d, s + lanes));
                s2 = hn::Sub(s2, hn::LoadU(d, s + 2 * lanes));
                s3 = hn::Sub(s3, hn::LoadU(d, s + 3 * lanes));
            }
            if (unit) {
                a0 = s0, a1 = s1, a2 = s2, a3 = s3;
            } else {
                const V m = hn::Set(d, taps.magnitudes[g]);
                a0 = hn::Add(a0, hn::Mul(s0, m));
                a1 = hn::Add(a1, hn::Mul(s1, m));
                a2 = hn::Add(a2, hn::Mul(s2, m));
                a3 = hn::Add(a3, hn::Mul(s3, m));
            }
        }
        const bool whole = k + 4 * lanes <= n;
        std::uint8_t* dst = whole ? out + k : tail;
        hn::StoreU(narrow(a0), d8, dst);
        hn::StoreU(narrow(a1), d8, dst + lanes);
        hn::StoreU(narrow(a2), d8, dst + 2 * lanes);
        hn::StoreU(narrow(a3), d8, dst + 3 * lanes);
        if (!whole) std::memcpy(out + k, tail, static_cast<std::size_t>(n - k));
    }
}

void CorrelateTapsToU8(const Int16Taps& taps, std::int16_t delta, bool take_abs, std::int64_t n,
                       std::uint8_t* out) {
    take_abs ? CorrelateToU8<true>(taps, delta, n, out) : CorrelateToU8<false>(taps, delta, n, out);
}

}  // namespace HWY_NAMESPACE
}  // namespace cudaconv
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cudaconv {
namespace {

CUDACONV_DISPATCH_TABLE(WidenU8ToI16);
CUDACONV_DISPATCH_TABLE(CorrelateTapsToU8);

}  // namespace

void widen_row(const std::uint8_t* src, std::int64_t n, std::int16_t* dst) {
    WidenU8ToI16Table[simd_target_index()](src, n, dst);
}

void correlate_taps_to_u8(const Int16Taps& taps, std::int16_t delta, bool take_abs, std::int64_t n,
                          std::uint8_t* out) {
    CorrelateTapsToU8Table[simd_target_index()](taps, delta, take_abs, n, out);
}

}  // namespace cudaconv
#endif  // HWY_ONCE
