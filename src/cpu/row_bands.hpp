#pragma once
// Output rows split into bands that run in parallel (cv::parallel_for_, on
// all cores): what the cpu variant's row-by-row paths share.
#include <algorithm>
#include <cstdint>

#include <opencv2/core.hpp>

namespace cudaconv {

// Output rows a band has at least: a band widens the filter_height - 1
// input rows it shares with the band above once more.
constexpr std::int64_t kMinBandRows = 8;
// Bands per worker thread, so that a thread slowed by something else (a
// hyperthread sibling, the CLI's own batch threads) is evened out.
constexpr int kBandsPerThread = 4;

// Calls rows(y_begin, y_end) on runs of neighbouring bands that together
// cover [0, height), in parallel; each call keeps one ring across its run.
template <typename F>
void for_each_band_run(std::int64_t height, F&& rows) {
    const std::int64_t threads = std::max(1, cv::getNumThreads());
    const std::int64_t bands =
        std::clamp(height / kMinBandRows, std::int64_t{1}, threads * kBandsPerThread);
    const auto band_start = [&](std::int64_t b) { return b * height / bands; };
    cv::parallel_for_(cv::Range(0, static_cast<int>(bands)),
                      [&](const cv::Range& r) { rows(band_start(r.start), band_start(r.end)); });
}

}  // namespace cudaconv
