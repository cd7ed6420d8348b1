#include "support/variant_tolerance.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/fft/fft_sizes.hpp"

namespace cudaconv::test {
namespace {

// The largest |sample| a filtered channel can contribute: the input's
// or the constant border value.
double max_abs_input(const Job& job, const cv::Mat& src) {
    double largest = std::abs(job.params.border_value);
    for (int c = 0; c < job.filtered_channels(); ++c) {
        cv::Mat plane;
        cv::extractChannel(src, plane, c);
        double lo = 0.0, hi = 0.0;
        cv::minMaxLoc(plane, &lo, &hi);
        largest = std::max({largest, std::abs(lo), std::abs(hi)});
    }
    return largest;
}

}  // namespace

Tolerance tolerance_for(const Backend& variant, const Job& job, const cv::Mat& src) {
    Tolerance t;  // docs/SPEC.md: integer outputs within 1 level, f32 within 1e-5 relative
    if (variant.name() == "fft") {
        // fft's float32 transforms: the absolute bound kernels/fft/fft.cu derives.
        const double bound = fft_error_bound(job);
        t.integer_levels = 1.0 + std::floor(bound);
        t.float_absolute = bound;
        return t;
    }
    // docs/SPEC.md allows float32 accumulation. When the sum cancels (a 1x1
    // image, or a flat area, under a filter summing near 0) 1e-5 of the
    // result is less than float32 can promise, so the textbook bound of
    // recursive summation, gamma_n * sum|f_i x_i| with gamma_n ~ n * 2^-24,
    // is allowed on top: for a 3x3 filter about 5e-7 of the input's range,
    // for 31x31 about 6e-5.
    const auto& taps = job.params.filter.taps;
    double abs_sum = 0.0;
    for (double tap : taps) abs_sum += std::abs(tap);
    const double n = static_cast<double>(taps.size());
    t.float_absolute = n * std::ldexp(1.0, -24) * abs_sum * max_abs_input(job, src) *
                       std::abs(job.params.scale);
    return t;
}

}  // namespace cudaconv::test
