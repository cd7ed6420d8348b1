#include "support/jpeg_frame.hpp"

#include <cstddef>

namespace cudaconv::test {

std::vector<JpegComponent> jpeg_components(const std::vector<std::uint8_t>& file) {
    // Markers after SOI: FF xx, then a big-endian length that counts itself.
    std::size_t i = 2;
    while (i + 4 <= file.size() && file[i] == 0xFF) {
        const int marker = file[i + 1];
        const std::size_t length = (std::size_t{file[i + 2]} << 8) | file[i + 3];
        const bool frame = marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 &&
                           marker != 0xCC;
        if (frame) {
            // Length, precision, height, width, component count, then 3 bytes
            // each: id, sampling factors (h << 4 | v), quantisation table.
            const std::size_t count = i + 9 < file.size() ? file[i + 9] : 0;
            std::vector<JpegComponent> components;
            for (std::size_t c = 0; c < count && i + 12 + 3 * c <= file.size(); ++c) {
                const std::size_t at = i + 10 + 3 * c;
                components.push_back({file[at], file[at + 1] >> 4, file[at + 1] & 15});
            }
            return components;
        }
        if (marker == 0xDA) break;  // scan data: no frame header came first
        i += 2 + length;
    }
    return {};
}

}  // namespace cudaconv::test
