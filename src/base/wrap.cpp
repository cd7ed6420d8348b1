#include "base/wrap.hpp"

#include <algorithm>
#include <vector>

namespace cudaconv {
namespace {

bool continuation_byte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

int columns(std::string_view text) {
    int n = 0;
    for (const char c : text) n += continuation_byte(c) ? 0 : 1;
    return n;
}

// The bytes of `text`'s first `characters` UTF-8 characters.
std::size_t prefix_bytes(std::string_view text, int characters) {
    std::size_t i = 0;
    for (int taken = 0; i < text.size(); ++i) {
        if (!continuation_byte(text[i]) && taken++ == characters) break;
    }
    return i;
}

std::vector<std::string_view> words(std::string_view text) {
    std::vector<std::string_view> found;
    while (!text.empty()) {
        const std::size_t start = text.find_first_not_of(' ');
        if (start == std::string_view::npos) break;
        text.remove_prefix(start);
        const std::size_t end = std::min(text.find(' '), text.size());
        found.push_back(text.substr(0, end));
        text.remove_prefix(end);
    }
    return found;
}

}  // namespace

std::string wrap_hanging(std::string_view lead, std::string_view text, int indent, int width) {
    std::string out(lead);
    int column = columns(lead);
    bool word_on_line = false;
    const auto new_line = [&] {
        while (!out.empty() && out.back() == ' ') out.pop_back();  // a lead's padding
        out += '\n';
        out.append(static_cast<std::size_t>(indent), ' ');
        column = indent;
        word_on_line = false;
    };
    for (std::string_view word : words(text)) {
        int word_columns = columns(word);
        if (word_on_line) {
            if (column + 1 + word_columns <= width) {
                out += ' ';
                out += word;
                column += 1 + word_columns;
                continue;
            }
            new_line();
        } else if (column + word_columns > width && column > indent) {
            new_line();  // the lead leaves it no room: under the others
        }
        // At the start of a line's text: a word wider than the room is cut.
        while (column + word_columns > width && column < width) {
            const std::size_t cut = prefix_bytes(word, width - column);
            out += word.substr(0, cut);
            word.remove_prefix(cut);
            word_columns = columns(word);
            new_line();
        }
        out += word;
        column += word_columns;
        word_on_line = true;
    }
    return out;
}

}  // namespace cudaconv
