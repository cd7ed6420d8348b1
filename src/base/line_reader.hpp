#pragma once
// Text read a line at a time, holding one block and one line, never the
// whole text: filter files and --from lists may be pipes or devices of any
// length (`--from /dev/urandom`), so a line longer than its bound is
// reported as too long instead of being stored, and the caller can bound
// the total as the blocks come in.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <istream>
#include <string>
#include <string_view>

namespace cudaconv {

class LineReader {
public:
    enum class Ends {
        any,      // \n, \r\n or a lone \r (old Mac files, some spreadsheet exports)
        newline,  // \n only, a \r before it dropped: a lone \r may be part of a path
    };
    enum class Status { line, end, too_long, read_error };

    // Sees each block of the text as it is read, before any of its lines is
    // handed out, with the offset of its first byte; it may throw. Text in
    // memory is one block.
    using BlockCheck = std::function<void(std::string_view block, std::uint64_t offset)>;

    // Lines of a stream (a file, a pipe, stdin), read in blocks.
    LineReader(std::istream& in, std::size_t max_line_bytes, Ends ends, BlockCheck check = {});
    // Lines of text already in memory.
    LineReader(std::string_view text, std::size_t max_line_bytes, Ends ends, BlockCheck check = {});

    // Moves to the next line. `line` when there is one (line(), number());
    // `too_long` when it is longer than max_line_bytes (number() is its
    // number); `read_error` when the stream failed (errno says why).
    Status next();

    // The line next() found, without its end; valid until the next call.
    std::string_view line() const { return line_; }
    // 1-based, as editors count.
    long long number() const { return number_; }

private:
    bool refill();  // false on a read error

    std::istream* in_ = nullptr;  // null for text in memory
    std::size_t max_line_;
    Ends ends_;
    BlockCheck check_;
    std::string buffer_;      // a stream's unread lines
    std::string_view data_;   // buffer_, or the text in memory
    std::size_t pos_ = 0;     // the next line's start in data_
    bool at_end_ = false;     // data_ holds all that is left
    std::uint64_t read_ = 0;  // bytes read so far
    std::string_view line_;
    long long number_ = 0;
};

}  // namespace cudaconv
