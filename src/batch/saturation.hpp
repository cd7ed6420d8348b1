#pragma once
// The silent mistakes of integer outputs, told from the filtered image:
// most samples pinned at the depth's top by a gain past 1 (a filter whose
// taps sum to 16, not 1), every sample 0 or 1 from a float input (an image
// in [0, 1] written as u8), or every sample one value where the filter
// changes the level. Each gives a white or black picture and exit 0; the
// warning says which and the likely fix.
#include <string>
#include <vector>

#include <opencv2/core.hpp>

#include "core/job.hpp"
#include "core/types.hpp"

namespace cudaconv {

// The share of samples at the top past which the warning speaks.
constexpr double kSaturatedShare = 0.5;

// "" where `out` looks like a picture; else the problem and its fix, for a
// warning line after the image's name. Looks at u8 and u16 outputs only
// (float does not saturate), at every sample of the filtered channels of
// up to 64 rows spread over the image (under a millisecond for 12
// megapixels: a batch's workers and one image's run hardly notice).
std::string saturation_problem(const cv::Mat& out, int filtered_channels, const ConvParams& params,
                               Depth in_depth);
// The same for a chain's output (core/chain.hpp): its gain is the product
// of its filters' sums, times the last step's --scale.
std::string saturation_problem(const cv::Mat& out, int filtered_channels,
                               const std::vector<ConvParams>& steps, Depth in_depth);

}  // namespace cudaconv
