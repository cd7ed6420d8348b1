#include "batch/saturation.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

namespace cudaconv {

namespace {

constexpr int kRowsLooked = 64;

struct Counts {
    std::uint64_t samples = 0;
    std::uint64_t at_top = 0;
    double lowest = 0.0;
    double highest = 0.0;
};

template <typename Sample>
Counts count(const cv::Mat& out, int filtered_channels, double top) {
    Counts c;
    c.lowest = top;
    const int step = std::max(1, out.rows / kRowsLooked);
    const int channels = out.channels();
    for (int y = 0; y < out.rows; y += step) {
        const Sample* row = out.ptr<Sample>(y);
        for (int x = 0; x < out.cols; ++x) {
            for (int ch = 0; ch < filtered_channels; ++ch) {
                const double v = row[x * channels + ch];
                c.at_top += v == top;
                c.lowest = std::min(c.lowest, v);
                c.highest = std::max(c.highest, v);
            }
        }
        c.samples += static_cast<std::uint64_t>(out.cols) * filtered_channels;
    }
    return c;
}

}  // namespace

std::string saturation_problem(const cv::Mat& out, int filtered_channels, const ConvParams& params,
                               Depth in_depth) {
    return saturation_problem(out, filtered_channels, std::vector<ConvParams>{params}, in_depth);
}

std::string saturation_problem(const cv::Mat& out, int filtered_channels,
                               const std::vector<ConvParams>& steps, Depth in_depth) {
    if (out.empty() || filtered_channels <= 0) return "";
    const bool wide = out.depth() == CV_16U;
    if (out.depth() != CV_8U && !wide) return "";
    const double top = wide ? 65535.0 : 255.0;
    const Counts c = wide ? count<std::uint16_t>(out, filtered_channels, top)
                          : count<std::uint8_t>(out, filtered_channels, top);
    if (c.samples < 2) return "";
    // What the filter, or the chain, makes of a flat level.
    double taps_sum = 1.0;
    for (const ConvParams& step : steps) taps_sum *= step.filter.sum();
    const ConvParams& params = steps.back();  // --scale and --delta are the last step's
    const char* whose = steps.size() > 1 ? "chain's" : "filter's";
    // Only a gain past 1 (or a positive delta) lifts samples past the
    // input's own top: a mostly white page blurred stays white, rightly.
    const double gain = taps_sum * params.scale;
    const bool lifts = gain > 1.0 + 1e-6 || params.delta > 0.0;
    const double share = static_cast<double>(c.at_top) / static_cast<double>(c.samples);
    if (share > kSaturatedShare && lifts) {
        return fmt::format("{:.0f}% of the samples saturate at {:.0f}: the {} taps sum to {:g}{} "
                           "(--normalize divides the taps by their sum)",
                           100.0 * share, top, whose, taps_sum,
                           params.scale != 1.0 ? fmt::format(" and --scale is {:g}", params.scale)
                                               : "");
    }
    if (in_depth == Depth::f32 && c.highest <= 1.0) {
        return fmt::format(
            "every sample is 0 or 1: a float image in [0, 1] written as integers? --scale {:.0f} "
            "(or --depth f32) keeps its values",
            top);
    }
    // A flat picture from a gain-1 filter was flat already.
    const bool changes_level = std::abs(gain - 1.0) > 1e-6 || params.delta != 0.0;
    if (c.lowest == c.highest && changes_level) {
        return fmt::format("every sample is {:.0f}: the {} gain is {:g} (its taps' sum times "
                           "--scale), plus --delta {:g}",
                           c.lowest, whose, gain, params.delta);
    }
    return "";
}

}  // namespace cudaconv
