#pragma once
// JPEGs as cameras write them when held sideways: an APP1 EXIF block right
// after SOI whose first directory holds the orientation tag.
#include <cstdint>
#include <string>
#include <vector>

#include <opencv2/core.hpp>

namespace cudaconv::test {

// The APP1 segment (marker, length, "Exif\0\0", a TIFF structure in
// either byte order) with one directory entry: orientation = `value`.
std::vector<std::uint8_t> exif_segment(int value, bool big_endian = false);

// `image` encoded as JPEG (quality 100), with `segment` inserted after SOI.
std::vector<std::uint8_t> jpeg_with_segment(const cv::Mat& image,
                                            const std::vector<std::uint8_t>& segment);

}  // namespace cudaconv::test
