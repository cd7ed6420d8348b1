#include "io/plausibility.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace cudaconv::detail {
namespace {

// Sizes up to 2^31 a side times 64 bits a pixel overflow 64-bit integers:
// long double holds them with room to spare for a bound.
using Wide = long double;

std::uint64_t to_bytes(Wide bytes) {
    if (bytes <= 0) return 0;
    const auto most = static_cast<Wide>(std::numeric_limits<std::uint64_t>::max());
    return bytes >= most ? std::numeric_limits<std::uint64_t>::max()
                         : static_cast<std::uint64_t>(std::floor(bytes));
}

Wide ceil_div(Wide a, Wide b) { return std::ceil(a / b); }

// The bytes of the filtered rows of a width x height image (or pass).
Wide filtered_bytes(Wide width, Wide height, int bits_per_pixel) {
    if (width <= 0 || height <= 0) return 0;
    return height * (1 + ceil_div(width * bits_per_pixel, 8));
}

}  // namespace

std::uint64_t least_png_idat_bytes(std::uint64_t width, std::uint64_t height, int bits_per_pixel,
                                   bool interlaced) {
    constexpr Wide kDeflateMostRatio = 1032;
    const Wide w = static_cast<Wide>(width), h = static_cast<Wide>(height);
    Wide raw = 0;
    if (!interlaced) {
        raw = filtered_bytes(w, h, bits_per_pixel);
    } else {
        // Adam7: each pass's first column and row, and its steps.
        constexpr int kPasses[7][4] = {{0, 8, 0, 8}, {4, 8, 0, 8}, {0, 4, 4, 8}, {2, 4, 0, 4},
                                       {0, 2, 2, 4}, {1, 2, 0, 2}, {0, 1, 1, 2}};
        for (const auto& [x0, dx, y0, dy] : kPasses) {
            raw += filtered_bytes(ceil_div(w - x0, dx), ceil_div(h - y0, dy), bits_per_pixel);
        }
    }
    // The stream's first byte is a literal; every 258 after it 2 bits at
    // best. One byte less for the rounding.
    return to_bytes(std::floor((raw - 1) / kDeflateMostRatio) - 1);
}

std::uint64_t least_jpeg_scan_bytes(std::uint64_t width, std::uint64_t height,
                                    const std::vector<JpegSampling>& components,
                                    JpegCoding coding) {
    if (coding == JpegCoding::other || components.empty()) return 0;
    int most_h = 1, most_v = 1;
    for (const JpegSampling& c : components) {
        most_h = std::max(most_h, c.horizontal);
        most_v = std::max(most_v, c.vertical);
    }
    // A component's own size (subsampled ones are smaller) in whole blocks,
    // as a scan of that component alone codes it; interleaved scans pad to
    // whole MCUs, which only adds blocks.
    Wide blocks = 0;
    for (const JpegSampling& c : components) {
        const Wide columns = ceil_div(static_cast<Wide>(width) * std::max(c.horizontal, 1), most_h);
        const Wide rows = ceil_div(static_cast<Wide>(height) * std::max(c.vertical, 1), most_v);
        blocks += ceil_div(columns, 8) * ceil_div(rows, 8);
    }
    const Wide bits_per_block = coding == JpegCoding::sequential_huffman ? 2 : 1;
    return to_bytes(std::floor(blocks * bits_per_block / 8));
}

}  // namespace cudaconv::detail
