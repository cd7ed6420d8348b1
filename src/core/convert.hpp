#pragma once
// The last step of every variant: v = scale*sum + delta, |v| if asked, then
// the output depth with round-half-to-even and saturation, as OpenCV's
// saturate_cast does. One definition for host and device.
#include <cmath>
#include <cstdint>

#include "core/hd.hpp"

namespace cudaconv {

template <typename Acc>
CC_HD Acc finish_value(Acc sum, Acc scale, Acc delta, bool take_abs) {
    const Acc v = scale * sum + delta;
    return take_abs ? (v < Acc(0) ? -v : v) : v;
}

// rint, which rounds half to even in the default rounding mode, in the
// sum's own type.
CC_HD float round_half_even(float v) { return rintf(v); }
CC_HD double round_half_even(double v) { return rint(v); }

template <typename Out>
struct SaturateCast;

template <>
struct SaturateCast<std::uint8_t> {
    template <typename Acc>
    CC_HD static std::uint8_t from(Acc v) {
        if (!(v == v)) return 0;  // NaN: as cvRound's INT_MIN saturates to 0
        const Acc r = round_half_even(v);
        return r <= Acc(0) ? 0 : (r >= Acc(255) ? 255 : static_cast<std::uint8_t>(r));
    }
};

template <>
struct SaturateCast<std::uint16_t> {
    template <typename Acc>
    CC_HD static std::uint16_t from(Acc v) {
        if (!(v == v)) return 0;
        const Acc r = round_half_even(v);
        return r <= Acc(0) ? 0 : (r >= Acc(65535) ? 65535 : static_cast<std::uint16_t>(r));
    }
};

template <>
struct SaturateCast<float> {
    template <typename Acc>
    CC_HD static float from(Acc v) {
        return static_cast<float>(v);
    }
};

template <typename Out, typename Acc>
CC_HD Out saturate_to(Acc v) {
    return SaturateCast<Out>::from(v);
}

}  // namespace cudaconv
