#pragma once
// Compares a variant's output with an expected image under docs/SPEC.md's
// tolerance, and names the worst sample so a failing test says where it
// failed. Knows nothing of any variant: cpu-ref is checked against OpenCV
// with it, and every other variant against cpu-ref.
#include <cstdint>
#include <ostream>
#include <string>

#include <opencv2/core.hpp>

#include "core/tolerance.hpp"

namespace cudaconv::test {

// docs/SPEC.md "Tolerances" (integer outputs within 1 level, float outputs
// within 1e-5 relative to the largest magnitude of the exact result, NaN
// never), and each variant's own float32 or fft bound: the product's
// definition (core/tolerance.hpp, Backend::tolerance), which bench applies
// too.
using Tolerance = cudaconv::Tolerance;

struct SampleDiff {
    std::int64_t x = -1;  // -1 while nothing was compared
    std::int64_t y = -1;
    int channel = -1;
    double expected = 0.0;
    double actual = 0.0;
    double error = 0.0;  // |actual - expected|; +inf for NaN or Inf
};

struct Comparison {
    bool ok = false;
    std::string problem;  // set when the images cannot be compared at all
    SampleDiff worst;     // the largest error, first such in raster order
    double tolerance = 0.0;
    std::int64_t failures = 0;  // samples over the tolerance
    std::int64_t samples = 0;

    // One line: the verdict, the worst sample, how many failed.
    std::string describe() const;
};

std::ostream& operator<<(std::ostream& os, const Comparison& c);

// `actual` is a variant's output (CV_8U, CV_16U or CV_32F, 1 to 4 channels).
// `expected` has the same size and channels in any depth: when it is a float
// depth and `actual` is an integer one it is first converted with
// cv::saturate_cast (round half to even, saturate), i.e. it may be passed as
// the exact result. For float outputs the tolerance scales with the largest
// finite |expected|. Either image may be a non-contiguous ROI.
Comparison compare_images(const cv::Mat& expected, const cv::Mat& actual,
                          const Tolerance& tolerance = {});

}  // namespace cudaconv::test
