#include "base/process_start.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace cudaconv {

void open_closed_standard_fds() noexcept {
    for (int fd = 0; fd <= 2; ++fd) {
        if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
        // open() takes the lowest free number: this one, since those below
        // it are open by now.
        const int opened = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
        if (opened != fd && opened >= 0) {
            dup2(opened, fd);
            close(opened);
        }
    }
}

}  // namespace cudaconv
