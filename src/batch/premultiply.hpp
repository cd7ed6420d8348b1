#pragma once
// --alpha premultiply: a 4-channel image filtered as compositing tools
// filter it. Each colour sample is weighted by its pixel's alpha before
// the filter and divided by the filtered alpha after, so a transparent
// pixel's colour (often black) does not bleed into its opaque neighbours:
// blurring a logo on a transparent background keeps the logo's colours to
// its edge, where --alpha keep darkens them.
//   before: c' = c * a / m, a' = a (float32; m the input depth's maximum:
//           255, 65535, or 1 for float)
//   filter: all four channels (AlphaMode::filter), float32 out
//   after:  a = A', c = A' > 0 ? C' / A' * m : 0, each rounded and
//           saturated to the output depth as the filter's results are
#include <opencv2/core.hpp>

#include "core/types.hpp"

namespace cudaconv {

// A BGRA image of u8, u16 or f32 samples as float32 with its colour
// multiplied by alpha / m.
cv::Mat premultiplied(const cv::Mat& bgra);

// The filtered float32 BGRA image back to straight colour, in `depth`,
// the input's maximum being `input_max` (so a u8 input written as u16
// keeps the meaning of its samples, as the filter's own output does).
cv::Mat unpremultiplied(const cv::Mat& filtered, Depth depth, double input_max);

// 255, 65535 or 1: the sample that means full for a depth.
double depth_max(Depth depth);

}  // namespace cudaconv
