#pragma once
// The expected result of a job computed with OpenCV alone (copyMakeBorder +
// filter2D in double), independent of cpu-ref and of the border policies in
// core/border.hpp, plus the glue between cv::Mat and cudaconv's image views.
#include <opencv2/core.hpp>

#include "core/job.hpp"
#include "core/types.hpp"

namespace cudaconv::test {

int cv_depth(Depth depth);               // CV_8U, CV_16U, CV_32F
int cv_type(Depth depth, int channels);  // e.g. CV_16UC3
int cv_border(BorderMode mode);          // cv::BORDER_*; `valid` as BORDER_CONSTANT
Depth depth_of(const cv::Mat& m);        // the inverse; throws for other depths

// Views of a Mat's pixels (ROIs included: row_bytes is the Mat's step).
ConstImageView const_view(const cv::Mat& m);
ImageView mutable_view(cv::Mat& m);

// The exact result in CV_64F, same channels as src, before the conversion to
// the output depth: correlation with params.filter at (anchor_x, anchor_y),
// the border of params.border, then scale*sum + delta and |.| if take_abs.
// A kept alpha channel holds the input's alpha (at the output's centre pixel)
// unscaled. `valid` gives (W-w+1)x(H-h+1), and an empty Mat when that is not
// positive.
cv::Mat reference_exact(const cv::Mat& src, const ConvParams& params);

// reference_exact converted to out_depth with cv::saturate_cast: what
// cv::filter2D produces for the same job.
cv::Mat reference_filter2d(const cv::Mat& src, const ConvParams& params, Depth out_depth);

}  // namespace cudaconv::test
