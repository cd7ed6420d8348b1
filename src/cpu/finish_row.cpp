#include "cpu/finish_row.hpp"

#include <cmath>
#include <limits>

#include "core/wide_lanes.hpp"
#include "cpu/simd_rows.hpp"

namespace cudaconv {
namespace {

// For integer outputs the value is clamped to [0, max] first, then rounded
// half to even by adding and subtracting 1.5 * 2^52 (exact for |v| < 2^51,
// and the clamp keeps it there; the default rounding mode is to nearest
// even, as saturate_to's rint assumes). Clamping before rounding gives what
// rounding before clamping gives, since the bounds are integers and
// rounding is monotonic. A NaN fails v > 0 and becomes 0, as in saturate_to.
// In double, as cpu-ref finishes.
//
// Rows go in chunks of kChunk with a scalar tail, and |.| is a template
// parameter rather than a branch in the loop: what GCC vectorises (with
// the options src/cpu/sources.cmake gives this file).
constexpr std::int64_t kChunk = 64;

template <typename Out, bool kAbs, std::int64_t kCount>
inline void finish_integers(const float* __restrict sums, double scale, double delta,
                            Out* __restrict out) {
    constexpr double kMax = static_cast<double>(std::numeric_limits<Out>::max());
    constexpr double kRound = 6755399441055744.0;  // 1.5 * 2^52
    for (std::int64_t k = 0; k < kCount; ++k) {
        double v = scale * static_cast<double>(sums[k]) + delta;
        if constexpr (kAbs) v = std::fabs(v);
        v = v > 0.0 ? v : 0.0;
        v = v < kMax ? v : kMax;
        out[k] = static_cast<Out>(static_cast<std::int32_t>((v + kRound) - kRound));
    }
}

template <typename Out, bool kAbs>
inline void finish_integers(const float* sums, std::int64_t n, double scale, double delta,
                            Out* out) {
    if (scale == 1.0 && delta == 0.0) {
        // The double's value is the float sum itself, so float does the
        // same at twice the lanes (cpu/simd_rows.hpp): the clamped value is
        // at most 65535, which float rounds half to even exactly.
        return finish_unscaled(sums, n, kAbs, out);
    }
    std::int64_t k = 0;
    for (; k + kChunk <= n; k += kChunk) {
        finish_integers<Out, kAbs, kChunk>(sums + k, scale, delta, out + k);
    }
    for (; k < n; ++k) finish_integers<Out, kAbs, 1>(sums + k, scale, delta, out + k);
}

template <typename Out>
inline void finish_integers(const float* sums, std::int64_t n, double scale, double delta,
                            bool take_abs, Out* out) {
    if (take_abs) {
        finish_integers<Out, true>(sums, n, scale, delta, out);
    } else {
        finish_integers<Out, false>(sums, n, scale, delta, out);
    }
}

template <bool kAbs>
inline void finish_floats_unscaled(const float* __restrict sums, std::int64_t n, float zero,
                                   float* __restrict out) {
    for (std::int64_t k = 0; k < n; ++k) {
        const float v = sums[k] + zero;
        out[k] = kAbs && v < 0.0f ? -v : v;
    }
}

}  // namespace

CUDACONV_WIDE_LANES void finish_row(const float* sums, std::int64_t n, double scale, double delta,
                                    bool take_abs, std::uint8_t* out) {
    finish_integers(sums, n, scale, delta, take_abs, out);
}

CUDACONV_WIDE_LANES void finish_row(const float* sums, std::int64_t n, double scale, double delta,
                                    bool take_abs, std::uint16_t* out) {
    finish_integers(sums, n, scale, delta, take_abs, out);
}

CUDACONV_WIDE_LANES void finish_row(const float* sums, std::int64_t n, double scale, double delta,
                                    bool take_abs, float* out) {
    if (scale == 1.0 && delta == 0.0) {
        // The double's value is the float sum plus delta (+0 or -0, which
        // turns a -0 sum into +0 or keeps it as finish_value does), so
        // float gives the same bits without the round trip through double.
        const float zero = static_cast<float>(delta);
        if (take_abs) {
            finish_floats_unscaled<true>(sums, n, zero, out);
        } else {
            finish_floats_unscaled<false>(sums, n, zero, out);
        }
        return;
    }
    for (std::int64_t k = 0; k < n; ++k) {
        const double v = scale * static_cast<double>(sums[k]) + delta;
        // finish_value's |.| exactly: -0 and a NaN with its sign bit keep it.
        out[k] = static_cast<float>(take_abs && v < 0.0 ? -v : v);
    }
}

}  // namespace cudaconv
