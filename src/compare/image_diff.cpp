#include "compare/image_diff.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>
#include <opencv2/imgproc.hpp>

#include "io/image_io.hpp"

namespace cudaconv {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// |a - b| with NaN = NaN and equal infinities counting as equal, and any
// other non-finite disagreement as +inf, so it can never hide in a mean.
double sample_difference(double a, double b) {
    if (std::isnan(a) || std::isnan(b)) return (std::isnan(a) && std::isnan(b)) ? 0.0 : kInf;
    if (a == b) return 0.0;  // equal infinities included
    const double d = std::abs(a - b);
    return std::isfinite(d) ? d : kInf;
}

// Row r of a Mat as doubles, whatever its depth.
void row_as_doubles(const cv::Mat& m, int r, std::vector<double>& out) {
    const std::size_t n = static_cast<std::size_t>(m.cols) * m.channels();
    out.resize(n);
    switch (m.depth()) {
        case CV_8U: std::copy_n(m.ptr<std::uint8_t>(r), n, out.begin()); break;
        case CV_16U: std::copy_n(m.ptr<std::uint16_t>(r), n, out.begin()); break;
        case CV_32F: std::copy_n(m.ptr<float>(r), n, out.begin()); break;
        default: throw std::invalid_argument("diff_images: only u8, u16 and f32 images");
    }
}

// The largest finite |v| of an image: what float tolerances are relative to.
double largest_magnitude(const cv::Mat& m) {
    double largest = 0.0;
    std::vector<double> row;
    for (int r = 0; r < m.rows; ++r) {
        row_as_doubles(m, r, row);
        for (double v : row) {
            if (std::isfinite(v)) largest = std::max(largest, std::abs(v));
        }
    }
    return largest;
}

// Per pixel, the largest difference over its channels (CV_64F, 1 channel).
cv::Mat pixel_differences(const cv::Mat& a, const cv::Mat& b) {
    cv::Mat out(a.rows, a.cols, CV_64F);
    const int channels = a.channels();
    std::vector<double> ra, rb;
    for (int r = 0; r < a.rows; ++r) {
        row_as_doubles(a, r, ra);
        row_as_doubles(b, r, rb);
        double* o = out.ptr<double>(r);
        for (int x = 0; x < a.cols; ++x) {
            double d = 0.0;
            for (int c = 0; c < channels; ++c) {
                const std::size_t k = static_cast<std::size_t>(x) * channels + c;
                d = std::max(d, sample_difference(ra[k], rb[k]));
            }
            o[x] = d;
        }
    }
    return out;
}

std::string size_text(const cv::Mat& m) { return fmt::format("{}x{}", m.cols, m.rows); }

}  // namespace

std::string comparability_problem(const cv::Mat& a, const cv::Mat& b) {
    if (a.size() != b.size()) {
        return fmt::format("sizes differ: {} vs {}", size_text(a), size_text(b));
    }
    if (a.channels() != b.channels()) {
        return fmt::format("channels differ: {} vs {}{}", a.channels(), b.channels(),
                           (a.channels() == 4 || b.channels() == 4)
                               ? " (--ignore-alpha compares the colour channels only)"
                               : "");
    }
    if (a.depth() != b.depth()) {
        return fmt::format("depths differ: {} vs {} (--depth converts both)",
                           depth_name(depth_of(a)), depth_name(depth_of(b)));
    }
    return {};
}

ImageDiff diff_images(const cv::Mat& a, const cv::Mat& b, double pixel_threshold) {
    if (const std::string problem = comparability_problem(a, b); !problem.empty()) {
        throw std::invalid_argument("diff_images: " + problem);
    }
    ImageDiff d;
    d.width = a.cols;
    d.height = a.rows;
    d.channels = a.channels();
    d.depth = depth_of(a);
    d.pixels = static_cast<std::int64_t>(a.rows) * a.cols;

    const int channels = a.channels();
    double sum_abs = 0.0, sum_sq = 0.0;
    std::vector<double> ra, rb;
    for (int r = 0; r < a.rows; ++r) {
        row_as_doubles(a, r, ra);
        row_as_doubles(b, r, rb);
        for (int x = 0; x < a.cols; ++x) {
            bool pixel_differs = false;
            for (int c = 0; c < channels; ++c) {
                const std::size_t k = static_cast<std::size_t>(x) * channels + c;
                const double diff = sample_difference(ra[k], rb[k]);
                sum_abs += diff;
                sum_sq += diff * diff;
                pixel_differs = pixel_differs || diff > pixel_threshold;
                if (diff > d.max_abs) {
                    d.max_abs = diff;
                    d.worst_x = x;
                    d.worst_y = r;
                    d.worst_channel = c;
                    const auto first =
                        static_cast<std::ptrdiff_t>(static_cast<std::size_t>(x) * channels);
                    d.worst_a.assign(ra.begin() + first, ra.begin() + first + channels);
                    d.worst_b.assign(rb.begin() + first, rb.begin() + first + channels);
                }
            }
            if (pixel_differs) ++d.differing_pixels;
        }
    }
    const double samples = static_cast<double>(d.pixels) * channels;
    if (samples > 0) {
        d.mean_abs = sum_abs / samples;
        d.rmse = std::sqrt(sum_sq / samples);
    }
    const double largest_b = largest_magnitude(b);
    if (d.depth == Depth::u8) d.peak = 255.0;
    else if (d.depth == Depth::u16) d.peak = 65535.0;
    else d.peak = largest_b > 0.0 ? largest_b : 1.0;
    d.psnr = d.rmse == 0.0 ? kInf : 20.0 * std::log10(d.peak / d.rmse);
    if (d.max_abs == 0.0) d.max_rel = 0.0;
    else d.max_rel = largest_b > 0.0 ? d.max_abs / largest_b : kInf;
    return d;
}

cv::Mat diff_heat_map(const cv::Mat& a, const cv::Mat& b) {
    const cv::Mat diff = pixel_differences(a, b);
    double largest_finite = 0.0;
    for (int r = 0; r < diff.rows; ++r) {
        const double* row = diff.ptr<double>(r);
        for (int x = 0; x < diff.cols; ++x) {
            if (std::isfinite(row[x])) largest_finite = std::max(largest_finite, row[x]);
        }
    }
    // Equal pixels stay black (level 0); differing ones start at a quarter
    // of the scale so that the smallest difference still shows, and grow
    // with log(1 + d) up to the largest; non-finite ones get the top.
    constexpr double kFloor = 64.0;
    const double log_top = std::log1p(largest_finite);
    cv::Mat levels(diff.rows, diff.cols, CV_8U);
    for (int r = 0; r < diff.rows; ++r) {
        const double* row = diff.ptr<double>(r);
        std::uint8_t* out = levels.ptr<std::uint8_t>(r);
        for (int x = 0; x < diff.cols; ++x) {
            const double d = row[x];
            double level = 0.0;
            if (!std::isfinite(d)) level = 255.0;
            else if (d > 0.0)
                level = kFloor + (255.0 - kFloor) * (log_top > 0 ? std::log1p(d) / log_top : 1.0);
            out[x] = static_cast<std::uint8_t>(std::lround(level));
        }
    }
    cv::Mat heat;
    cv::applyColorMap(levels, heat, cv::COLORMAP_INFERNO);
    return heat;
}

DifferingLimit parse_differing_limit(const std::string& text) {
    DifferingLimit limit;
    std::string number = text;
    if (!number.empty() && number.back() == '%') {
        limit.percent = true;
        number.pop_back();
    }
    std::size_t used = 0;
    double value = 0.0;
    try {
        value = std::stod(number, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (number.empty() || used != number.size() || !std::isfinite(value) || value < 0.0 ||
        (limit.percent && value > 100.0)) {
        throw std::invalid_argument(fmt::format(
            "--max-differing {}: expected a pixel count (120) or a percentage (0.5%)", text));
    }
    limit.value = value;
    return limit;
}

std::vector<std::string> limit_violations(const ImageDiff& diff, const DiffLimits& limits) {
    std::vector<std::string> broken;
    const DiffLimits effective = limits.any() ? limits : DiffLimits{0.0, {}, {}, {}};
    if (effective.max_abs && !(diff.max_abs <= *effective.max_abs)) {
        broken.push_back(fmt::format("max-abs {:.6g} > {:.6g}", diff.max_abs, *effective.max_abs));
    }
    if (effective.max_rel && !(diff.max_rel <= *effective.max_rel)) {
        broken.push_back(fmt::format("max-rel {:.3g} > {:.3g}", diff.max_rel, *effective.max_rel));
    }
    if (effective.min_psnr && !(diff.psnr >= *effective.min_psnr)) {
        broken.push_back(fmt::format("psnr {:.2f} dB < {:.2f} dB", diff.psnr, *effective.min_psnr));
    }
    if (effective.max_differing) {
        const DifferingLimit& m = *effective.max_differing;
        if (m.percent && !(100.0 * diff.differing_share() <= m.value)) {
            broken.push_back(fmt::format("differing {:.4g}% > {:.4g}%",
                                         100.0 * diff.differing_share(), m.value));
        } else if (!m.percent && !(static_cast<double>(diff.differing_pixels) <= m.value)) {
            broken.push_back(
                fmt::format("differing {} pixels > {:.0f}", diff.differing_pixels, m.value));
        }
    }
    return broken;
}

}  // namespace cudaconv
