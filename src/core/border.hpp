#pragma once
// Border policies: where a coordinate outside [0, len) reads from.
// Shared by cpu-ref and every CUDA kernel, so all variants agree by
// construction. Each matches OpenCV's cv::borderInterpolate exactly,
// including coordinates more than one image length away (filters larger
// than the image), but in closed form so device code has no loops.
#include <cstdint>

#include "core/hd.hpp"
#include "core/types.hpp"

namespace cudaconv {

// Returned for BorderMode::constant outside the image: use --border-value.
constexpr std::int64_t kBorderConstant = -1;

CC_HD std::int64_t positive_mod(std::int64_t p, std::int64_t period) {
    const std::int64_t m = p % period;
    return m < 0 ? m + period : m;
}

struct Reflect101Border {  // gfedcb|abcdefgh|gfedcba
    CC_HD static std::int64_t index(std::int64_t p, std::int64_t len) {
        if (p >= 0 && p < len) return p;
        if (len == 1) return 0;
        const std::int64_t period = 2 * len - 2;
        const std::int64_t m = positive_mod(p, period);
        return m < len ? m : period - m;
    }
};

struct ReflectBorder {  // fedcba|abcdefgh|hgfedcb
    CC_HD static std::int64_t index(std::int64_t p, std::int64_t len) {
        if (p >= 0 && p < len) return p;
        const std::int64_t period = 2 * len;
        const std::int64_t m = positive_mod(p, period);
        return m < len ? m : period - 1 - m;
    }
};

struct ReplicateBorder {  // aaaaaa|abcdefgh|hhhhhhh
    CC_HD static std::int64_t index(std::int64_t p, std::int64_t len) {
        return p < 0 ? 0 : (p >= len ? len - 1 : p);
    }
};

struct ConstantBorder {  // iiiiii|abcdefgh|iiiiiii
    CC_HD static std::int64_t index(std::int64_t p, std::int64_t len) {
        return (p >= 0 && p < len) ? p : kBorderConstant;
    }
};

struct WrapBorder {  // cdefgh|abcdefgh|abcdefg
    CC_HD static std::int64_t index(std::int64_t p, std::int64_t len) {
        return (p >= 0 && p < len) ? p : positive_mod(p, len);
    }
};

// `valid` never reads outside the image: the output shrinks instead.
struct ValidBorder {
    CC_HD static std::int64_t index(std::int64_t p, std::int64_t) { return p; }
};

// Whether every sample outside the image is one a u8 image can hold: any
// border but constant, or a constant one whose value is a whole number in
// 0..255. Paths that stage u8 samples as they are (fast's strips, the
// tensor-core path of fast-separable) take only such jobs, and auto knows it.
CC_HD bool border_fits_u8(BorderMode mode, double value) {
    return mode != BorderMode::constant || (value >= 0.0 && value <= 255.0 &&
                                            static_cast<double>(static_cast<int>(value)) == value);
}

// Run-time dispatch, for code that is not templated on the policy.
CC_HD std::int64_t border_index(BorderMode mode, std::int64_t p, std::int64_t len) {
    switch (mode) {
        case BorderMode::reflect101: return Reflect101Border::index(p, len);
        case BorderMode::reflect: return ReflectBorder::index(p, len);
        case BorderMode::replicate: return ReplicateBorder::index(p, len);
        case BorderMode::constant: return ConstantBorder::index(p, len);
        case BorderMode::wrap: return WrapBorder::index(p, len);
        case BorderMode::valid: return ValidBorder::index(p, len);
    }
    return kBorderConstant;
}

// Returned by border_index_near where its closed forms do not hold.
constexpr std::int64_t kBorderFar = -2;

// border_index for p within one image length of the image (one less for
// reflect101), in closed form with no division: kernels that place a border
// coordinate for every staged item take this, and border_index (out of
// line) only where it returns kBorderFar.
CC_HD std::int64_t border_index_near(BorderMode mode, std::int64_t p, std::int64_t len) {
    if (p >= 0 && p < len) return p;
    const bool before = p < 0;
    std::int64_t q = 0;
    switch (mode) {
        case BorderMode::reflect101: q = before ? -p : 2 * len - 2 - p; break;
        case BorderMode::reflect: q = before ? -p - 1 : 2 * len - 1 - p; break;
        case BorderMode::replicate: return before ? 0 : len - 1;
        case BorderMode::wrap: q = before ? p + len : p - len; break;
        case BorderMode::constant: return kBorderConstant;
        case BorderMode::valid: return kBorderFar;  // never reads outside the image
    }
    return q >= 0 && q < len ? q : kBorderFar;
}

}  // namespace cudaconv
