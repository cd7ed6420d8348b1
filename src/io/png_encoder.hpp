#pragma once
// PNG files written by cudaconv itself instead of OpenCV's libpng + zlib:
// a 4000x3000 RGB photo at level 1 in less than half of cv::imencode's
// time, and smaller (docs/PERFORMANCE.md). The encoder is small because PNG
// is: an IHDR, IDATs holding the zlib stream of the rows, each row after a
// filter byte, and an IEND; every chunk with its CRC-32. The filter is one
// for the whole image: "Up" (the difference from the row above: cheap,
// vectorised, and as good as adaptive filtering on photos) or "None" (best
// on filtered images such as edge maps). The stream comes from libdeflate,
// or at level 1 from run_deflate.hpp (runs only: 2.4-3x as fast, and
// smaller on photos and edge maps), whichever compresses a sample of the
// rows smaller (runs allowed 15% more, for their speed). Readers see an ordinary 8- or 16-bit gray, RGB or RGBA PNG.
#include <cstddef>
#include <cstdint>
#include <vector>

#include <opencv2/core.hpp>

namespace cudaconv {

// image: CV_8U or CV_16U with 1, 3 or 4 channels in OpenCV's order (BGR, BGRA).
// level: 0 (stored) to 9, passed to libdeflate (whose levels go to 12); at
// 1, runs only where the sample says they do about as well.
// max_idat_bytes: the compressed stream is split into IDAT chunks of at
// most this many bytes (a chunk's length has 31 bits; tests make it small).
// threads: how many of OpenCV's threads the rows may be filtered and (by
// runs) compressed on; the file is the same whatever the count.
// Throws std::invalid_argument for an empty image or another depth or
// channel count.
constexpr std::size_t kMaxIdatBytes = std::size_t{1} << 30;
std::vector<std::uint8_t> encode_png(const cv::Mat& image, int level,
                                     std::size_t max_idat_bytes = kMaxIdatBytes, int threads = 1);

// The rows encode_png's level-1 check compresses both ways: 8 strips of 4
// rows spread down an image of `height` rows (fewer in a small one), row 0
// left out where it can be.
std::vector<int> png_sample_rows(int height);

// A PNG around a zlib stream of the image's filtered rows (each after its
// filter byte) made elsewhere, by runs (kernels/codecs/png_deflate.hpp: the GPU).
// sample: the filtered rows png_sample_rows(height) names, as the stream
// holds them. encode_png's level-1 rule holds here too: where a string
// search compresses the sample more than 15% smaller than runs, the stream
// is inflated and compressed again by libdeflate's level 1.
std::vector<std::uint8_t> png_from_runs_stream(int width, int height, int sample_bytes,
                                               int channels, const std::vector<std::uint8_t>& zlib,
                                               const std::vector<std::uint8_t>& sample,
                                               std::size_t max_idat_bytes = kMaxIdatBytes);

}  // namespace cudaconv
