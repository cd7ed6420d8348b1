#include "core/tolerance.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace cudaconv {
namespace {

// The largest |value| of a filtered sample in one row of one depth; NaN
// as soon as one is NaN.
template <typename T>
double max_abs_in_row(const std::byte* row, std::int64_t width, int channels, int filtered) {
    double largest = 0.0;
    for (std::int64_t x = 0; x < width; ++x) {
        for (int c = 0; c < filtered; ++c) {
            T v;
            std::memcpy(&v, row + (x * channels + c) * std::int64_t{sizeof(T)}, sizeof(T));
            const double a = std::abs(static_cast<double>(v));
            if (std::isnan(a)) return a;
            largest = std::max(largest, a);
        }
    }
    return largest;
}

}  // namespace

double max_abs_filtered_input(const Job& job) {
    const ConvParams& p = job.params;
    double largest = p.border == BorderMode::constant ? std::abs(p.border_value) : 0.0;
    const ConstImageView& src = job.src;
    const int filtered = job.filtered_channels();
    for (std::int64_t y = 0; y < src.height && src.data != nullptr; ++y) {
        double row_max = 0.0;
        switch (src.depth) {
            case Depth::u8:
                row_max =
                    max_abs_in_row<std::uint8_t>(src.row(y), src.width, src.channels, filtered);
                break;
            case Depth::u16:
                row_max =
                    max_abs_in_row<std::uint16_t>(src.row(y), src.width, src.channels, filtered);
                break;
            case Depth::f32:
                row_max = max_abs_in_row<float>(src.row(y), src.width, src.channels, filtered);
                break;
        }
        if (std::isnan(row_max)) return row_max;
        largest = std::max(largest, row_max);
    }
    return largest;
}

Tolerance float32_sum_tolerance(const Job& job) {
    return float32_sum_tolerance(job, max_abs_filtered_input(job));
}

Tolerance float32_sum_tolerance(const Job& job, double max_abs_input) {
    Tolerance t;
    double abs_sum = 0.0;
    for (const double tap : job.params.filter.taps) abs_sum += std::abs(tap);
    const double n = static_cast<double>(job.params.filter.taps.size());
    t.float_absolute =
        n * std::ldexp(1.0, -24) * abs_sum * max_abs_input * std::abs(job.params.scale);
    return t;
}

Tolerance against_reference(const Tolerance& variant, const Tolerance& reference, bool exact) {
    if (exact) return variant;
    return {variant.integer_levels + reference.integer_levels,
            variant.float_relative + reference.float_relative,
            variant.float_absolute + reference.float_absolute};
}

}  // namespace cudaconv
