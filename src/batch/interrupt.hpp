#pragma once
// Ctrl-C during a batch: the first SIGINT or SIGTERM asks the batch to stop
// (no new image is started, writes under way finish, the summary is
// printed); a second one ends the process at once, removing the temporary
// files of the writes under way. Outside a batch, the first one does that.
namespace cudaconv {

// Installs the handler for SIGINT and SIGTERM (main calls it once).
void install_interrupt_handler();

// While an object lives, the first signal only asks to stop.
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
