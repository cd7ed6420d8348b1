#pragma once
// The numbers `cudaconv compare` reports for two images of the same size,
// channels and depth, and the verdict against the user's limits. Pure
// functions of two cv::Mat: the CLI reads, converts and prints around them.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <opencv2/core.hpp>

#include "core/types.hpp"

namespace cudaconv {

struct ImageDiff {
    std::int64_t width = 0;
    std::int64_t height = 0;
    int channels = 0;
    Depth depth = Depth::u8;

    // Over all samples. A NaN against a number, or infinities of different
    // sign, differ by +inf; NaN against NaN and equal infinities are equal.
    double max_abs = 0.0;
    double mean_abs = 0.0;
    double rmse = 0.0;
    // 20·log10(peak / rmse); +inf for identical images. The peak is the
    // depth's largest value (255, 65535), and for float the largest finite
    // |B| (1 when B is all zero): B is the expected image.
    double psnr = 0.0;
    double peak = 0.0;
    // max_abs relative to the largest finite |B| (+inf when B is all zero
    // and A is not): docs/SPEC.md's tolerance for float outputs.
    double max_rel = 0.0;

    // Pixels with a sample that differs by more than the pixel threshold.
    std::int64_t differing_pixels = 0;
    std::int64_t pixels = 0;

    // The first sample (raster order) with the largest difference, and
    // every channel of both images at its pixel; x = -1 when none differs.
    std::int64_t worst_x = -1;
    std::int64_t worst_y = -1;
    int worst_channel = -1;
    std::vector<double> worst_a;
    std::vector<double> worst_b;

    bool identical() const { return max_abs == 0.0; }
    double differing_share() const {
        return pixels == 0 ? 0.0
                           : static_cast<double>(differing_pixels) / static_cast<double>(pixels);
    }
};

// Why two images cannot be compared sample by sample ("sizes differ:
// 640x480 vs 640x479"), or empty when they can.
std::string comparability_problem(const cv::Mat& a, const cv::Mat& b);

// A is the image under test, B the expected one. Both must be comparable
// (same size, channels and u8/u16/f32 depth); they may be ROIs.
ImageDiff diff_images(const cv::Mat& a, const cv::Mat& b, double pixel_threshold = 0.0);

// A heat map of |A - B| (the largest over a pixel's channels), CV_8UC3:
// black where the pixels are equal, then the inferno colour map on a log
// scale, so one level of difference is as visible as the largest.
cv::Mat diff_heat_map(const cv::Mat& a, const cv::Mat& b);

// --max-differing: a pixel count ("120") or a share of pixels ("0.5%").
struct DifferingLimit {
    bool percent = false;
    double value = 0.0;
};
// Throws std::invalid_argument naming the problem.
DifferingLimit parse_differing_limit(const std::string& text);

// The thresholds; a limit not given is not checked. With none given at
// all, the images must be identical (max-abs 0).
struct DiffLimits {
    std::optional<double> max_abs;
    std::optional<double> max_rel;
    std::optional<double> min_psnr;
    std::optional<DifferingLimit> max_differing;

    bool any() const { return max_abs || max_rel || min_psnr || max_differing; }
};

// Each limit the diff breaks, in words ("max-abs 3 > 1"); empty when the
// images are within every limit.
std::vector<std::string> limit_violations(const ImageDiff& diff, const DiffLimits& limits);

}  // namespace cudaconv
