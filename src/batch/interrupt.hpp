#pragma once
// Signals, so that none leaves a temporary file behind (io/image_io.hpp's
// write_file_atomically).
//
// Ctrl-C during a batch: the first SIGINT, SIGTERM or SIGHUP asks the
// batch to stop (no new image is started, writes under way finish, the
// summary is printed, exit 128 + the signal); a second one ends the process
// at once. Outside a batch, the first one does that. SIGQUIT, SIGUSR1,
// SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU and SIGABRT end it at once,
// and so do the faults (SIGSEGV, SIGBUS, SIGFPE, SIGILL). Ending at once
// removes the temporary files of the writes under way, then takes the
// signal's own action, so that the exit status (and a core dump, where the
// signal makes one) is what it would have been. SIGXFSZ and SIGPIPE are
// ignored: the write they would have ended fails instead (EFBIG: a file
// size limit, EPIPE: a closed pipe on stdout) and is reported as any failed
// write is, its temporary file removed.
#include <string>

namespace cudaconv {

// Installs the handlers (main calls it once, before any other thread).
void install_interrupt_handler();

// "SIGHUP" for SIGHUP.
std::string signal_name(int signal_number);

// While an object lives, the first SIGINT, SIGTERM or SIGHUP only asks to stop.
class GracefulStop {
public:
    GracefulStop();
    ~GracefulStop();
    GracefulStop(const GracefulStop&) = delete;
    GracefulStop& operator=(const GracefulStop&) = delete;

    bool requested() const;
    int signal_number() const;  // the signal that asked, or 0
};

}  // namespace cudaconv
