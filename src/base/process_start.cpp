#include "base/process_start.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace cudaconv {
namespace {

std::string kib(rlim_t bytes) { return fmt::format("{} KiB", bytes / 1024); }

}  // namespace

void open_closed_standard_fds() noexcept {
    for (int fd = 0; fd <= 2; ++fd) {
        if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
        // open() takes the lowest free number: this one, since those below
        // it are open by now. Opened the wrong way round, as gnulib's
        // stdopen does: the number is taken, yet reading stdin or writing
        // stdout fails (EBADF) as on the closed descriptor, so that `-o -`
        // or --timings under `>&-` is an error, not output thrown away.
        const int opened = open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
        if (opened != fd && opened >= 0) {
            dup2(opened, fd);
            close(opened);
        }
    }
}

std::string ensure_stack_limit(std::size_t needed) {
    rlimit limit{};
    if (getrlimit(RLIMIT_STACK, &limit) != 0) return "";
    if (limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur >= needed) return "";
    if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < needed) {
        return fmt::format("the stack size limit (ulimit -s) is {}, and its hard limit {}: "
                           "cudaconv needs at least {}",
                           kib(limit.rlim_cur), kib(limit.rlim_max), kib(needed));
    }
    limit.rlim_cur = needed;
    if (setrlimit(RLIMIT_STACK, &limit) != 0) {
        return fmt::format("the stack size limit (ulimit -s) is below the {} cudaconv needs, "
                           "and raising it failed: {}",
                           kib(needed), std::strerror(errno));
    }
    pthread_attr_t attr;
    if (pthread_getattr_default_np(&attr) == 0) {
        std::size_t size = 0;
        if (pthread_attr_getstacksize(&attr, &size) == 0 && size < needed) {
            pthread_attr_setstacksize(&attr, needed);
            pthread_setattr_default_np(&attr);
        }
        pthread_attr_destroy(&attr);
    }
    return "";
}

}  // namespace cudaconv
