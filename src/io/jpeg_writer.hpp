#pragma once
// JPEG outputs, written with libjpeg (libjpeg-turbo) directly rather than
// through cv::imencode, whose OpenCV 4.6 cannot choose the chroma sampling.
// At 4:2:0 the file is byte for byte the one cv::imencode writes at the
// same quality (tests/unit/test_jpeg_writer.cpp holds it so): baseline,
// libjpeg's standard Huffman tables and its exact integer DCT.
#include <cstdint>
#include <vector>

#include <opencv2/core.hpp>

#include "core/jpeg_settings.hpp"

namespace cudaconv {

// Encodes an 8-bit image of 1 (gray) or 3 (BGR) channels. Throws
// std::invalid_argument for any other image, std::bad_alloc when out of
// memory, and std::runtime_error with libjpeg's message for anything else.
std::vector<std::uint8_t> encode_jpeg(const cv::Mat& image, const JpegSettings& settings);

}  // namespace cudaconv
