#include "bench/verify.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>

namespace cudaconv {
namespace {

template <typename T>
double sample_at(const ConstImageView& img, std::int64_t y, std::int64_t i) {
    T v;
    std::memcpy(&v, img.row(y) + i * static_cast<std::int64_t>(sizeof(T)), sizeof(T));
    return static_cast<double>(v);
}

double sample_at(const ConstImageView& img, std::int64_t y, std::int64_t i) {
    switch (img.depth) {
        case Depth::u8: return sample_at<std::uint8_t>(img, y, i);
        case Depth::u16: return sample_at<std::uint16_t>(img, y, i);
        case Depth::f32: return sample_at<float>(img, y, i);
    }
    return 0.0;
}

double sample_error(double expected, double actual) {
    if (std::isnan(expected) || std::isnan(actual)) return std::numeric_limits<double>::infinity();
    if (expected == actual) return 0.0;  // equal infinities too
    return std::abs(actual - expected);
}

double largest_finite_magnitude(const ConstImageView& img) {
    double largest = 0.0;
    const std::int64_t row_samples = img.width * img.channels;
    for (std::int64_t y = 0; y < img.height; ++y) {
        for (std::int64_t i = 0; i < row_samples; ++i) {
            const double v = sample_at(img, y, i);
            if (std::isfinite(v)) largest = std::max(largest, std::abs(v));
        }
    }
    return largest;
}

}  // namespace

std::string Verdict::describe() const {
    if (!problem.empty()) return "cannot compare: " + problem;
    std::string text = fmt::format("{} of {} samples over {:.6g}", failures, samples, tolerance);
    if (worst.x >= 0) {
        text += fmt::format("; worst at (x={}, y={}, c={}): expected {:.9g}, got {:.9g}", worst.x,
                            worst.y, worst.channel, worst.expected, worst.actual);
    }
    return text;
}

Verdict verify_output(const ConstImageView& expected, const ConstImageView& actual,
                      const Tolerance& tolerance) {
    Verdict v;
    if (expected.width != actual.width || expected.height != actual.height ||
        expected.channels != actual.channels || expected.depth != actual.depth) {
        v.problem = fmt::format("expected {}x{}x{} {}, got {}x{}x{} {}", expected.width,
                                expected.height, expected.channels, depth_name(expected.depth),
                                actual.width, actual.height, actual.channels,
                                depth_name(actual.depth));
        return v;
    }
    v.tolerance = actual.depth == Depth::f32
                      ? tolerance.float_relative * largest_finite_magnitude(expected) +
                            tolerance.float_absolute
                      : tolerance.integer_levels;
    const std::int64_t row_samples = actual.width * actual.channels;
    for (std::int64_t y = 0; y < actual.height; ++y) {
        for (std::int64_t i = 0; i < row_samples; ++i) {
            const double e = sample_at(expected, y, i);
            const double a = sample_at(actual, y, i);
            const double error = sample_error(e, a);
            ++v.samples;
            if (error > v.tolerance) ++v.failures;
            if (v.worst.x < 0 || error > v.worst.error) {
                v.worst = {
                    i / actual.channels, y, static_cast<int>(i % actual.channels), e, a, error};
            }
        }
    }
    v.ok = v.failures == 0;
    return v;
}

}  // namespace cudaconv
