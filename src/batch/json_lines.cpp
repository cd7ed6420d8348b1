#include "batch/json_lines.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <system_error>

#include "core/errors.hpp"
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
    fd_ = ::open(path.c_str(),
                 O_WRONLY | O_CREAT | O_CLOEXEC | (overwrite ? O_TRUNC : O_EXCL), 0666);
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
    const char* data = text.data();
    std::size_t left = text.size();
    while (left > 0) {
        const ssize_t n = ::write(fd_, data, left);
        if (n > 0) {
            data += n;
            left -= static_cast<std::size_t>(n);
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            pollfd wait{fd_, POLLOUT, 0};  // a non-blocking stdout: wait until it drains
            ::poll(&wait, 1, -1);
        } else {
            throw WorkError(name_ + ": cannot write: " + errno_text(n < 0 ? errno : EIO));
        }
    }
}

}  // namespace cudaconv
