#pragma once
// cudaconv's own PNG reader, on libpng's progressive API. It gives what
// cv::imdecode(bytes, IMREAD_UNCHANGED) gives, sample for sample (8- or
// 16-bit; gray, BGR or BGRA; palettes and tRNS expanded, gray+alpha as
// BGRA, interlaced images), but unlike OpenCV's reader:
//  - it stops inflating at the image's size: image data past the last row
//    is corruption, not a warning after gigabytes of zeros;
//  - the header's size goes through ReadOptions' checks (--max-pixels, the
//    memory check) before the image is allocated;
//  - it feeds the file to libpng in pieces and polls ReadOptions::cancelled
//    between them, so that Ctrl-C or SIGTERM stops a long decode;
//  - ancillary chunks (text, ICC profiles, ...) are skipped unread: they do
//    not change the samples, and cannot make libpng inflate anything.
#include <cstddef>
#include <cstdint>
#include <string>

#include <opencv2/core.hpp>

#include "io/decode_limits.hpp"

namespace cudaconv {

// Decodes PNG bytes. Throws WorkError "NAME: problem" (truncated or corrupt
// data, a size the checks refuse, out of memory), or Cancelled when
// options.cancelled said so. Prints nothing. Safe on any bytes: the entry
// point for fuzzing.
cv::Mat decode_png(const std::uint8_t* data, std::size_t size, const std::string& name,
                   const ReadOptions& options = {});

}  // namespace cudaconv
