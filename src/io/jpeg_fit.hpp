#pragma once
// JPEG holds 8-bit gray or colour. What cudaconv makes of other images
// written to it, as ImageMagick does rather than refuse: alpha flattened
// onto a background colour (--background, white by default), 16-bit
// samples scaled to 8 bits (v / 257, rounded). Float samples are not
// converted: their range is the user's to say (--depth u8, --scale).
#include <array>
#include <cstdint>
#include <string>

#include <opencv2/core.hpp>

#include "core/types.hpp"

namespace cudaconv {

// An 8-bit RGB colour.
using Rgb8 = std::array<std::uint8_t, 3>;
constexpr Rgb8 kWhite{255, 255, 255};

struct JpegFit {
    bool flattens_alpha = false;  // 4 channels: composited onto the background
    bool scales_16_bit = false;   // u16 samples: to 8 bits

    bool converts() const { return flattens_alpha || scales_16_bit; }
    // "alpha flattened onto white, 16-bit samples scaled to 8", naming
    // the background as given.
    std::string what(const std::string& background) const;
};

// What writing an image of this shape as JPEG converts.
JpegFit jpeg_fit(int channels, Depth depth);

// `image` (1, 3 or 4 channels, BGR(A)) as JPEG holds it: the same Mat
// where nothing converts (u8 gray or colour; float, which JPEG refuses);
// else 8-bit gray or BGR, each colour
// sample c of alpha a (of the depth's maximum m) becoming
// round((c * a + b * (m - a)) / m * 255 / m), b the background's sample
// scaled to m.
cv::Mat fit_for_jpeg(const cv::Mat& image, const Rgb8& background);

// "white", "black" or "#RRGGBB" (any case); throws UsageError otherwise.
Rgb8 parse_background(const std::string& text);

}  // namespace cudaconv
