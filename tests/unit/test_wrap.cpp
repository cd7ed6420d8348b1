// Text wrapped for an 80-column terminal with a hanging indent (`list`).
#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>
#include <string>

#include "base/wrap.hpp"

namespace cudaconv {
namespace {

int columns(const std::string& line) {
    int n = 0;
    for (const char c : line) n += (static_cast<unsigned char>(c) & 0xC0) == 0x80 ? 0 : 1;
    return n;
}

int widest_line(const std::string& text) {
    std::istringstream lines(text);
    int widest = 0;
    for (std::string line; std::getline(lines, line);) widest = std::max(widest, columns(line));
    return widest;
}

}  // namespace

TEST_CASE("wrap: a line that fits is left as it is", "[wrap]") {
    CHECK(wrap_hanging("edge   ", "3x3 edge detector", 7) == "edge   3x3 edge detector");
    CHECK(wrap_hanging("", "", 4) == "");
    CHECK(wrap_hanging("x  ", "  spaces   between  ", 3) == "x  spaces between");
}

TEST_CASE("wrap: long text goes on under where it began", "[wrap]") {
    // 20 columns: "name  " is the lead, the text's column is 6.
    CHECK(wrap_hanging("name  ", "one two three four five six", 6, 20) == "name  one two three\n"
                                                                          "      four five six");
    // A word that ends exactly at the width stays on its line.
    CHECK(wrap_hanging("ab ", "cdefghij klmn", 3, 11) == "ab cdefghij\n   klmn");
    CHECK(wrap_hanging("ab ", "cdefgh ijklmn", 3, 13) == "ab cdefgh\n   ijklmn");
    CHECK(wrap_hanging("ab ", "cdefgh ijk", 3, 13) == "ab cdefgh ijk");
}

TEST_CASE("wrap: a word wider than a line is cut where the line ends", "[wrap]") {
    CHECK(wrap_hanging("ab ", "0123456789abcdef", 3, 10) == "ab 0123456\n   789abcd\n   ef");
    // After another word, it starts on a line of its own first.
    CHECK(wrap_hanging("", "x 0123456789", 0, 6) == "x\n012345\n6789");
}

TEST_CASE("wrap: a lead wider than its column moves the text below", "[wrap]") {
    CHECK(wrap_hanging("a-long-name ", "text", 4, 14) == "a-long-name\n    text");
    CHECK(wrap_hanging("a-long-name ", "te", 4, 14) == "a-long-name te");
}

TEST_CASE("wrap: columns are characters, not bytes", "[wrap]") {
    // "×" and "µ" take two bytes each and one column.
    CHECK(wrap_hanging("", "3×3 31µs abc", 0, 8) == "3×3 31µs\nabc");
    CHECK(wrap_hanging("", "µµµµµµµµµµ", 0, 4) == "µµµµ\nµµµµ\nµµ");
}

TEST_CASE("wrap: no line is ever wider than asked", "[wrap]") {
    const std::string text =
        "rank-1 filters: tensor cores on u8 (up to 33x33), else one kernel with the "
        "intermediate in shared memory (odd square 3..31) averyveryveryverylongwordwithoutspaces "
        "that must be cut somewhere";
    for (int width = 12; width <= 80; ++width) {
        for (const int indent : {0, 2, 6, width / 2}) {
            const std::string wrapped = wrap_hanging("fast-separable ", text, indent, width);
            INFO("width " << width << ", indent " << indent << ":\n" << wrapped);
            CHECK(widest_line(wrapped) <= std::max(width, 15));  // the lead is 15 wide
        }
    }
}

}  // namespace cudaconv
