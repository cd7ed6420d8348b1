#include "base/line_reader.hpp"

#include <utility>

namespace cudaconv {
namespace {

// Big enough that a file is read in few calls, small beside any bound.
constexpr std::size_t kBlockBytes = 64 * 1024;

}  // namespace

LineReader::LineReader(std::istream& in, std::size_t max_line_bytes, Ends ends, BlockCheck check)
    : in_(&in), max_line_(max_line_bytes), ends_(ends), check_(std::move(check)) {}

LineReader::LineReader(std::string_view text, std::size_t max_line_bytes, Ends ends,
                       BlockCheck check)
    : max_line_(max_line_bytes), ends_(ends), check_(std::move(check)), data_(text), at_end_(true) {
    if (check_ && !text.empty()) check_(text, 0);
}

bool LineReader::refill() {
    buffer_.erase(0, pos_);
    pos_ = 0;
    const std::size_t kept = buffer_.size();
    buffer_.resize(kept + kBlockBytes);
    in_->read(buffer_.data() + kept, static_cast<std::streamsize>(kBlockBytes));
    const auto got = static_cast<std::size_t>(in_->gcount());
    buffer_.resize(kept + got);
    data_ = buffer_;
    if (in_->bad()) return false;
    // read() stops short of a whole block only at the end of the stream.
    if (got < kBlockBytes) at_end_ = true;
    if (check_ && got > 0) check_(data_.substr(kept), read_);
    read_ += got;
    return true;
}

LineReader::Status LineReader::next() {
    for (;;) {
        const std::string_view rest = data_.substr(pos_);
        const std::size_t end = ends_ == Ends::any ? rest.find_first_of("\r\n") : rest.find('\n');
        // A \r last in the block may be the first half of \r\n.
        const bool end_unsure = end != std::string_view::npos && rest[end] == '\r' &&
                                end + 1 == rest.size();
        if ((end == std::string_view::npos || end_unsure) && !at_end_) {
            // One byte of slack: the \r of a \r\n that the block cut off.
            if (rest.size() > max_line_ + 1) {
                ++number_;
                return Status::too_long;
            }
            if (!refill()) return Status::read_error;
            continue;
        }
        if (rest.empty()) return Status::end;

        std::string_view line = rest.substr(0, end);
        std::size_t next = end == std::string_view::npos ? rest.size() : end + 1;
        if (next < rest.size() && rest[next - 1] == '\r' && rest[next] == '\n') ++next;
        if (ends_ == Ends::newline && !line.empty() && line.back() == '\r') line.remove_suffix(1);
        ++number_;
        if (line.size() > max_line_) return Status::too_long;
        line_ = line;
        pos_ += next;
        return Status::line;
    }
}

}  // namespace cudaconv
