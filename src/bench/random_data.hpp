#pragma once
// The bench's inputs: random images and random dense filters from fixed
// seeds, so two runs (or two machines) time and check the same data.
#include <cstdint>

#include <opencv2/core.hpp>

#include "bench/cases.hpp"
#include "core/types.hpp"
#include "filters/filter.hpp"

namespace cudaconv {

constexpr std::uint64_t kBenchImageSeed = 20261122;
constexpr std::uint64_t kBenchFilterSeed = 5;

// Samples uniform over the depth's full range (u8 0..255, u16 0..65535),
// f32 in [0, 1). The seed is kBenchImageSeed mixed with size and depth.
cv::Mat random_bench_image(const BenchSize& size, Depth depth);

// Taps uniform in [0, 1), divided by their sum: dense and asymmetric (a
// flipped or transposed filter gives other outputs), with a gain of 1, so
// integer outputs stay in range instead of saturating, and verification
// compares real values. The seed is kBenchFilterSeed mixed with the size.
Filter random_dense_filter(int width, int height);

}  // namespace cudaconv
