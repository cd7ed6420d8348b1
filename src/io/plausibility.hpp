#pragma once
// The fewest bytes in which a valid file can hold the image its header
// claims. A file with fewer is truncated, and is said to be before any
// buffer is made for the image: a forged header of a few bytes cannot make
// cudaconv allocate gigabytes. The bounds are what the coding allows at its
// very best, which no real file reaches (the tests try flat images, the
// most compressible there are).
#include <cstdint>
#include <vector>

namespace cudaconv::detail {

// PNG's IDAT chunks hold one zlib stream of the filtered rows (a filter
// byte and the packed pixels each, per interlace pass when interlaced).
// Deflate codes at most 258 bytes in 2 bits (a length and a distance code
// of 1 bit each), 1032:1.
std::uint64_t least_png_idat_bytes(std::uint64_t width, std::uint64_t height, int bits_per_pixel,
                                   bool interlaced);

enum class JpegCoding : std::uint8_t {
    sequential_huffman,   // baseline and extended (SOF0, SOF1)
    progressive_huffman,  // SOF2
    other                 // arithmetic, lossless, hierarchical: no bound
};

struct JpegSampling {
    int horizontal = 1;  // the component's sampling factors, 1..4
    int vertical = 1;
};

// JPEG's entropy-coded data: every 8x8 block of every component codes its
// DC difference (a Huffman code of 1 bit at least) and, in a sequential
// scan, an end-of-block (1 bit at least): 2 bits a block. A progressive
// file codes the DC first (1 bit a block); its AC scans can skip thousands
// of blocks with one end-of-band run, so they add nothing certain.
// Arithmetic coding has no such floor: 0.
std::uint64_t least_jpeg_scan_bytes(std::uint64_t width, std::uint64_t height,
                                    const std::vector<JpegSampling>& components, JpegCoding coding);

}  // namespace cudaconv::detail
