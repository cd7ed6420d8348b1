#include "batch/json_lines.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <system_error>

#include "base/errors.hpp"
#include "io/image_io.hpp"

namespace cudaconv {
namespace {

std::string errno_text(int err) { return std::generic_category().message(err); }

}  // namespace

JsonLines::JsonLines(const std::string& path, bool overwrite) {
    if (path == kStdStream) {
        name_ = "<stdout> (--json -)";
        fd_ = STDOUT_FILENO;
        return;
    }
    name_ = path;
    fd_ =
        ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | (overwrite ? O_TRUNC : O_EXCL), 0666);
    if (fd_ < 0) throw WorkError(name_ + ": cannot write: " + errno_text(errno));
    owned_ = true;
}

JsonLines::~JsonLines() {
    if (owned_) ::close(fd_);
}

void JsonLines::write_line(const std::string& line) {
    const std::string text = line + "\n";
    // --timings prints on stdout through stdio: its text goes out first.
    if (!owned_) std::fflush(stdout);
    if (const int err =
            write_all(fd_, reinterpret_cast<const std::uint8_t*>(text.data()), text.size())) {
        // Part of the line may be in the file (a full disk, ulimit -f): the
        // file is cut back to the lines before it, each whole.
        if (owned_) (void)::ftruncate(fd_, static_cast<off_t>(complete_bytes_));
        throw WorkError(name_ + ": cannot write: " + errno_text(err));
    }
    complete_bytes_ += text.size();
}

}  // namespace cudaconv
