#pragma once
// Random test inputs with fixed, printed seeds.
#include <cstdint>
#include <random>

#include <opencv2/core.hpp>

#include "filters/filter.hpp"

namespace cudaconv::test {

// Uniform samples over the depth's range (u8 0..255, u16 0..65535,
// f32 -1000..1000), any channel count.
cv::Mat random_image(int width, int height, int cv_type, std::uint64_t seed);

// An asymmetric filter with taps in [-1, 1], so a flip or a transpose
// cannot pass unnoticed.
Filter random_filter(int width, int height, std::uint64_t seed);

}  // namespace cudaconv::test
