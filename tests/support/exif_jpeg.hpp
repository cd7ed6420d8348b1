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

// An EXIF block (its TIFF structure, little-endian) as a camera writes one:
// IFD0 with Make "cudaconv-cam", Model "model-1", the orientation `value`,
// DateTime "2024:05:06 07:08:09" and the Exif and GPS directories' offsets;
// the Exif directory with ExposureTime 1/250 and DateTimeOriginal (as
// DateTime); the GPS directory with GPSVersionID 2.2.0.0 and
// GPSLatitudeRef "N"; then IFD1, a thumbnail's, with its 4 bytes.
std::vector<std::uint8_t> camera_exif(int value);

// `image` encoded as JPEG (quality 100), with `segment` inserted after SOI.
std::vector<std::uint8_t> jpeg_with_segment(const cv::Mat& image,
                                            const std::vector<std::uint8_t>& segment);

}  // namespace cudaconv::test
