#include "base/printable.hpp"

#include <cstdint>

namespace cudaconv {
namespace {

// The length of the valid UTF-8 sequence at the start of `text` (RFC 3629:
// no overlong forms, no surrogates, nothing past U+10FFFF), 0 when there is
// none; `code_point` is what it encodes.
std::size_t utf8_sequence(std::string_view text, std::uint32_t& code_point) {
    const auto byte = [&text](std::size_t i) { return static_cast<unsigned char>(text[i]); };
    const unsigned char lead = byte(0);
    std::size_t length = 0;
    unsigned char low = 0x80, high = 0xBF;  // the range of the second byte
    if (lead >= 0xC2 && lead <= 0xDF) {
        length = 2;
        code_point = lead & 0x1Fu;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        length = 3;
        code_point = lead & 0x0Fu;
        if (lead == 0xE0) low = 0xA0;   // overlong below U+0800
        if (lead == 0xED) high = 0x9F;  // surrogates
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        length = 4;
        code_point = lead & 0x07u;
        if (lead == 0xF0) low = 0x90;   // overlong below U+10000
        if (lead == 0xF4) high = 0x8F;  // past U+10FFFF
    } else {
        return 0;
    }
    if (text.size() < length || byte(1) < low || byte(1) > high) return 0;
    for (std::size_t i = 1; i < length; ++i) {
        if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
        code_point = (code_point << 6) | (byte(i) & 0x3Fu);
    }
    return length;
}

void append_escaped(std::string& out, std::string_view bytes) {
    constexpr char kHex[] = "0123456789abcdef";
    for (const char c : bytes) {
        const auto b = static_cast<unsigned char>(c);
        out += "\\x";
        out += kHex[b >> 4];
        out += kHex[b & 0xF];
    }
}

// Appends the printable form of `text` to `out`, at most `max_chars`
// characters of it (an escape counts as its four); false when it had to
// stop before the end.
bool append_printable(std::string& out, std::string_view text, std::size_t max_chars) {
    std::size_t chars = 0;
    for (std::size_t i = 0; i < text.size();) {
        const auto b = static_cast<unsigned char>(text[i]);
        std::size_t length = 1;
        bool escape = false;
        if (b < 0x80) {
            escape = b < 0x20 || b == 0x7F;
        } else {
            std::uint32_t code_point = 0;
            length = utf8_sequence(text.substr(i), code_point);
            escape = length == 0 || code_point < 0xA0;  // invalid, or a C1 control
            if (length == 0) length = 1;
        }
        const std::size_t width = escape ? 4 * length : 1;
        if (chars + width > max_chars) return false;
        chars += width;
        if (escape) {
            append_escaped(out, text.substr(i, length));
        } else {
            out.append(text, i, length);
        }
        i += length;
    }
    return true;
}

}  // namespace

std::string printable(std::string_view text, std::size_t max_chars) {
    std::string out;
    if (!append_printable(out, text, max_chars)) out += "...";
    return out;
}

std::string printable_spec(std::string_view spec) { return printable(spec, kMaxEchoedSpecChars); }

std::string describe(const std::filesystem::filesystem_error& e) {
    std::string where = printable(e.path1().native());
    if (!e.path2().empty()) where += " -> " + printable(e.path2().native());
    const std::string problem = e.code().message();
    return where.empty() ? problem : where + ": " + problem;
}

}  // namespace cudaconv
