// The stderr filters behind CodecMessages: a glibc cookie stream replaces
// the C `stderr` (libjpeg and libpng print with fprintf(stderr, ...), reading
// the variable at each call), and a stream buffer replaces std::cerr's
// (OpenCV's loadsave.cpp writes there). Both route by a thread-local pointer,
// so concurrent decodes each keep their own messages.
#include "io/codec_messages.hpp"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <streambuf>
#include <string_view>
#include <utility>

namespace cudaconv::detail {
namespace {

// Enough for every message a codec prints about one image; a flood (say a
// libpng warning per row) must not grow without bound.
constexpr std::size_t kMaxKeptBytes = 4096;

thread_local std::string* t_sink = nullptr;
FILE* g_real_stderr = nullptr;

bool keep(const char* data, std::size_t size) {
    if (t_sink == nullptr) return false;
    const std::size_t room = kMaxKeptBytes - std::min(kMaxKeptBytes, t_sink->size());
    t_sink->append(data, std::min(room, size));
    return true;
}

ssize_t write_stderr(void* /*cookie*/, const char* data, std::size_t size) {
    if (!keep(data, size)) std::fwrite(data, 1, size, g_real_stderr);
    return static_cast<ssize_t>(size);
}

// Unbuffered, like std::cerr itself: every piece goes straight through.
class CerrFilter : public std::streambuf {
public:
    explicit CerrFilter(std::streambuf* real) : real_(real) {}

protected:
    int_type overflow(int_type c) override {
        if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
        const char ch = traits_type::to_char_type(c);
        return xsputn(&ch, 1) == 1 ? c : traits_type::eof();
    }
    std::streamsize xsputn(const char* s, std::streamsize n) override {
        if (keep(s, static_cast<std::size_t>(n))) return n;
        return real_->sputn(s, n);
    }
    int sync() override { return t_sink != nullptr ? 0 : real_->pubsync(); }

private:
    std::streambuf* real_;
};

std::string_view first_line(std::string_view text) { return text.substr(0, text.find('\n')); }

bool starts_with(std::string_view s, std::string_view prefix) {
    return s.substr(0, prefix.size()) == prefix;
}

// "imdecode_('...'): can't read data: OpenCV(4.6.0) ./modules/...: error:
// (-2:Unspecified error) Unexpected end of input stream in function 'x'"
// -> "Unexpected end of input stream".
std::string opencv_gist(std::string_view line) {
    const std::size_t code = line.find("error: (");
    if (code == std::string_view::npos) return {};
    const std::size_t start = line.find(") ", code);
    if (start == std::string_view::npos) return {};
    std::string_view gist = line.substr(start + 2);
    gist = gist.substr(0, gist.find(" in function"));
    return std::string(gist);
}

}  // namespace

void install_codec_message_capture() {
    static std::once_flag once;
    std::call_once(once, [] {
        g_real_stderr = stderr;
        cookie_io_functions_t io{};
        io.write = write_stderr;
        if (FILE* filtered = fopencookie(nullptr, "w", io)) {
            std::setvbuf(filtered, nullptr, _IONBF, 0);
            stderr = filtered;  // glibc documents stderr as an assignable variable
        }
        // Never deleted: std::cerr is flushed during exit, after statics die.
        std::cerr.rdbuf(new CerrFilter(std::cerr.rdbuf()));
    });
}

CodecMessages::CodecMessages() : previous_(t_sink) { t_sink = &text_; }

CodecMessages::~CodecMessages() { t_sink = previous_; }

std::string CodecMessages::summary() const {
    std::string from_opencv;
    std::string_view rest = text_;
    while (!rest.empty()) {
        const std::string_view line = first_line(rest);
        rest.remove_prefix(std::min(rest.size(), line.size() + 1));
        if (line.empty()) continue;
        if (starts_with(line, "imdecode_(") || starts_with(line, "imread_(")) {
            const std::string gist = opencv_gist(line);
            if (from_opencv.empty() && !gist.empty()) from_opencv = "OpenCV: " + gist;
            continue;
        }
        // The codec library's own words say more than OpenCV's wrapper.
        for (const auto& [prefix, library] :
             {std::pair<std::string_view, std::string_view>{"libpng error: ", "libpng: "},
              {"libpng warning: ", "libpng: "},
              {"Corrupt JPEG data: ", "libjpeg: "}}) {
            if (starts_with(line, prefix)) {
                return std::string(library) + std::string(line.substr(prefix.size()));
            }
        }
        return std::string(line);  // e.g. libjpeg's "Premature end of JPEG file"
    }
    return from_opencv;
}

std::string one_line(const std::string& text) {
    std::string line;
    std::string_view rest = text;
    while (!rest.empty()) {
        std::string_view piece = first_line(rest);
        rest.remove_prefix(std::min(rest.size(), piece.size() + 1));
        while (!piece.empty() && (piece.front() == '>' || piece.front() == ' '))
            piece.remove_prefix(1);
        while (!piece.empty() && (piece.back() == ':' || piece.back() == ' '))
            piece.remove_suffix(1);
        if (piece.empty()) continue;
        if (!line.empty()) line += ": ";
        line += piece;
    }
    return line;
}

}  // namespace cudaconv::detail
