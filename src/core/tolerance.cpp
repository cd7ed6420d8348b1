#include "core/tolerance.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace cudaconv {
namespace {

template <typename T>
double max_abs_samples(const Job& job) {
    const ConstImageView& src = job.src;
    const int filtered = job.filtered_channels();
    double largest = 0.0;
    for (std::int64_t y = 0; y < src.height; ++y) {
        const std::byte* row = src.row(y);
        for (std::int64_t x = 0; x < src.width; ++x) {
            for (int c = 0; c < filtered; ++c) {
                T v;
                std::memcpy(&v, row + (x * src.channels + c) * sizeof(T), sizeof(T));
                const double a = std::abs(static_cast<double>(v));
                if (std::isnan(a)) return a;
                largest = std::max(largest, a);
            }
        }
    }
    return largest;
}

}  // namespace

double max_abs_filtered_input(const Job& job) {
    double largest = 0.0;
    switch (job.src.depth) {
        case Depth::u8: largest = max_abs_samples<std::uint8_t>(job); break;
        case Depth::u16: largest = max_abs_samples<std::uint16_t>(job); break;
        case Depth::f32: largest = max_abs_samples<float>(job); break;
    }
    if (job.params.border == BorderMode::constant) {
        largest = std::max(largest, std::abs(job.params.border_value));
    }
    return largest;
}

Tolerance float32_sum_tolerance(const Job& job) {
    Tolerance t;
    double abs_sum = 0.0;
    for (const double tap : job.params.filter.taps) abs_sum += std::abs(tap);
    const double n = static_cast<double>(job.params.filter.taps.size());
    t.float_absolute = n * std::ldexp(1.0, -24) * abs_sum * max_abs_filtered_input(job) *
                       std::abs(job.params.scale);
    return t;
}

Tolerance against_reference(const Tolerance& variant, const Tolerance& reference, bool exact) {
    if (exact) return variant;
    return {variant.integer_levels + reference.integer_levels,
            variant.float_relative + reference.float_relative,
            variant.float_absolute + reference.float_absolute};
}

}  // namespace cudaconv
