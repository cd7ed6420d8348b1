#pragma once
// Black PNGs of any size made in no time, however much their image data
// inflates to: for the tests of hostile images (bombs, huge legit images,
// slow decodes).
#include <cstddef>
#include <cstdint>
#include <string>

namespace cudaconv::test {

// A zlib stream of `length` zero bytes: one compressed megabyte repeated
// (it starts with a literal zero, then copies the byte before, so it holds
// anywhere in a run of zeros), closed by a last block and zeros' Adler-32.
std::string zeros_zlib(std::uint64_t length);

// A black PNG, 8- or 16-bit of colour type 0 (gray), 2 (RGB), 4 (gray and
// alpha) or 6 (RGBA), whose image data is `extra` zero bytes longer than its
// rows, in IDAT chunks of `idat_bytes` (0: one chunk).
std::string black_png(std::uint32_t width, std::uint32_t height, int colour_type, int bit_depth = 8,
                      std::uint64_t extra = 0, std::size_t idat_bytes = 0);

// A PNG chunk: its length, type, data and CRC.
std::string png_chunk(const char* type, const std::string& data);

}  // namespace cudaconv::test
