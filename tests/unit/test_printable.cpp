// base/printable.hpp and base/line_reader.hpp: user text made safe to echo,
// and text read a line at a time with a bound on the line.
#include <catch2/catch.hpp>

#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "base/line_reader.hpp"
#include "base/printable.hpp"
#include "support/control_bytes.hpp"

namespace cudaconv {
namespace {

using namespace std::string_literals;
using test::has_control_bytes;

struct ReadLines {
    std::vector<std::string> lines;
    LineReader::Status last = LineReader::Status::end;
    long long last_number = 0;
};

ReadLines read_all(LineReader& reader) {
    ReadLines out;
    for (;;) {
        out.last = reader.next();
        out.last_number = reader.number();
        if (out.last != LineReader::Status::line) return out;
        out.lines.emplace_back(reader.line());
    }
}

// The same text read from memory and as a stream, which must agree.
ReadLines read_both(const std::string& text, std::size_t max_line, LineReader::Ends ends) {
    LineReader in_memory(text, max_line, ends);
    const ReadLines a = read_all(in_memory);
    std::istringstream stream(text);
    LineReader streamed(stream, max_line, ends);
    const ReadLines b = read_all(streamed);
    CHECK(a.lines == b.lines);
    CHECK(a.last == b.last);
    CHECK(a.last_number == b.last_number);
    return b;
}

}  // namespace

TEST_CASE("printable escapes control bytes and stray bytes, keeps UTF-8", "[printable]") {
    CHECK(printable("plain -f edge, x.png") == "plain -f edge, x.png");
    CHECK(printable("a\x1b[31mred\x1b[0m") == "a\\x1b[31mred\\x1b[0m");
    CHECK(printable("\r\n\t\0\x7f"s) == "\\x0d\\x0a\\x09\\x00\\x7f");
    CHECK(printable("back\\slash") == "back\\slash");
    // C1 controls (U+0080..U+009F; 0x9B is CSI) in UTF-8 are controls too.
    CHECK(printable("\xc2\x9b"
                    "31m") == "\\xc2\\x9b31m");
    CHECK(printable("\xc2\xa0 gr\xc3\xb6\xc3\x9f"
                    "e \xe2\x86\x92 \xf0\x9f\x98\x80") == "\xc2\xa0 gr\xc3\xb6\xc3\x9f"
                                                          "e \xe2\x86\x92 \xf0\x9f\x98\x80");
    // Bytes that are not valid UTF-8: alone, overlong, surrogates, past
    // U+10FFFF, cut short.
    CHECK(printable("\x80") == "\\x80");
    CHECK(printable("\xff\xfe") == "\\xff\\xfe");
    CHECK(printable("\xc0\xaf") == "\\xc0\\xaf");
    CHECK(printable("\xe0\x80\xaf") == "\\xe0\\x80\\xaf");
    CHECK(printable("\xed\xa0\x80") == "\\xed\\xa0\\x80");
    CHECK(printable("\xf4\x90\x80\x80") == "\\xf4\\x90\\x80\\x80");
    CHECK(printable("\xe2\x82") == "\\xe2\\x82");
    CHECK(printable("\xe2\x82x") == "\\xe2\\x82x");
}

TEST_CASE("printable output holds no control byte and is printable again as it is", "[printable]") {
    std::mt19937 random(20261126);
    std::uniform_int_distribution<int> byte(0, 255);
    for (int round = 0; round < 2000; ++round) {
        std::string text(static_cast<std::size_t>(round % 64), '\0');
        for (char& c : text) c = static_cast<char>(byte(random));
        const std::string once = printable(text);
        INFO("round " << round);
        CHECK_FALSE(has_control_bytes(once));
        CHECK(printable(once) == once);
    }
}

TEST_CASE("printable cuts long text after whole characters and escapes", "[printable]") {
    CHECK(printable("abcdef", 3) == "abc...");
    CHECK(printable("abc", 3) == "abc");
    CHECK(printable("ab\x1b", 5) == "ab...");  // the escape's four do not fit
    CHECK(printable("ab\x1b", 6) == "ab\\x1b");
    CHECK(printable("\xc3\xa9\xc3\xa9\xc3\xa9", 2) == "\xc3\xa9\xc3\xa9...");
    CHECK(printable_spec(std::string(80, 'a')) == std::string(80, 'a'));
    CHECK(printable_spec(std::string(300, 'a')) == std::string(80, 'a') + "...");
}

TEST_CASE("lines end in LF, CRLF or a lone CR, read from memory or a stream alike", "[printable]") {
    using Ends = LineReader::Ends;
    CHECK(read_both("", 10, Ends::any).lines.empty());
    CHECK(read_both("", 10, Ends::any).last_number == 0);
    CHECK(read_both("a\nb\r\nc\rd", 10, Ends::any).lines ==
          std::vector<std::string>{"a", "b", "c", "d"});
    CHECK(read_both("a\n\n\r\n", 10, Ends::any).lines == std::vector<std::string>{"a", "", ""});
    // Lists: \n only; a \r before it is dropped, a lone one is kept.
    CHECK(read_both("a\r\nb\rc\n\nd\r", 10, Ends::newline).lines ==
          std::vector<std::string>{"a", "b\rc", "", "d"});

    // A \r\n that a block boundary (64 KiB) cuts in two is one line end.
    for (std::size_t length = 65530; length < 65540; ++length) {
        const std::string text = std::string(length, 'x') + "\r\ny\r\n";
        INFO("length " << length);
        const ReadLines r = read_both(text, 70000, Ends::any);
        CHECK(r.lines == std::vector<std::string>{std::string(length, 'x'), "y"});
    }
}

TEST_CASE("a line past the bound is reported by number, not stored", "[printable]") {
    using Status = LineReader::Status;
    const ReadLines r =
        read_both("ok\n12345\n" + std::string(200000, 'z'), 5, LineReader::Ends::any);
    CHECK(r.lines == std::vector<std::string>{"ok", "12345"});
    CHECK(r.last == Status::too_long);
    CHECK(r.last_number == 3);
    const ReadLines exact = read_both("123456\n", 5, LineReader::Ends::newline);
    CHECK(exact.last == Status::too_long);
    CHECK(exact.last_number == 1);
    // The bound is on the line without its end.
    CHECK(read_both("12345\r\n", 5, LineReader::Ends::newline).lines ==
          std::vector<std::string>{"12345"});
}

TEST_CASE("the block check sees every byte once, at its offset", "[printable]") {
    std::string text;
    for (int i = 0; i < 30000; ++i) text += std::to_string(i) + "\n";
    std::istringstream stream(text);
    std::string seen;
    LineReader reader(stream, 100, LineReader::Ends::any,
                      [&seen](std::string_view block, std::uint64_t offset) {
                          CHECK(offset == seen.size());
                          seen += block;
                      });
    const ReadLines r = read_all(reader);
    CHECK(r.lines.size() == 30000u);
    CHECK(seen == text);
}

TEST_CASE("filesystem errors read PATH: problem", "[printable]") {
    namespace fs = std::filesystem;
    const auto not_a_directory = std::make_error_code(std::errc::not_a_directory);
    const fs::filesystem_error mkdir("cannot create directories", "out\x1b/x", not_a_directory);
    CHECK(describe(mkdir) == "out\\x1b/x: Not a directory");
    CHECK(describe(fs::filesystem_error("cannot rename", "a", "b",
                                        std::make_error_code(std::errc::file_exists))) ==
          "a -> b: File exists");
    CHECK(describe(fs::filesystem_error("cannot get current path",
                                        std::make_error_code(std::errc::permission_denied))) ==
          "Permission denied");
}

}  // namespace cudaconv
