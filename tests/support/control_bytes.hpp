#pragma once
// Whether text holds a byte a terminal obeys: C0 controls, DEL, or a C1
// control in UTF-8 (0xC2 0x80..0x9F). For checks that user text is echoed
// escaped; `line_ends` allowed lets a whole stderr's line ends through.
#include <cstddef>
#include <string>

namespace cudaconv::test {

enum class LineEnds { refused, allowed };

inline bool has_control_bytes(const std::string& text, LineEnds line_ends = LineEnds::refused) {
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto b = static_cast<unsigned char>(text[i]);
        if (b == '\n' && line_ends == LineEnds::allowed) continue;
        if (b < 0x20 || b == 0x7f) return true;
        if (b == 0xc2 && i + 1 < text.size()) {
            const auto next = static_cast<unsigned char>(text[i + 1]);
            if (next >= 0x80 && next < 0xa0) return true;
        }
    }
    return false;
}

}  // namespace cudaconv::test
