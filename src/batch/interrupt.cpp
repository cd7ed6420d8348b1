#include "batch/interrupt.hpp"

#include <atomic>
#include <csignal>

#include "io/image_io.hpp"

namespace cudaconv {
namespace {

// Lock-free atomics: all a signal handler may touch.
std::atomic<bool> g_graceful{false};
std::atomic<int> g_requested_by{0};
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<bool>::is_always_lock_free);

extern "C" void on_terminating_signal(int signal_number) {
    int none = 0;
    if (g_graceful.load() && g_requested_by.compare_exchange_strong(none, signal_number)) {
        return;  // the batch sees it and winds down
    }
    // An interrupted write must not leave its temporary file behind.
    remove_pending_temp_files();
    std::signal(signal_number, SIG_DFL);
    std::raise(signal_number);
}

}  // namespace

void install_interrupt_handler() {
    // glibc's signal() restarts interrupted reads and writes (SA_RESTART).
    std::signal(SIGINT, on_terminating_signal);
    std::signal(SIGTERM, on_terminating_signal);
}

GracefulStop::GracefulStop() {
    g_requested_by.store(0);
    g_graceful.store(true);
}

GracefulStop::~GracefulStop() { g_graceful.store(false); }

bool GracefulStop::requested() const { return g_requested_by.load() != 0; }

int GracefulStop::signal_number() const { return g_requested_by.load(); }

}  // namespace cudaconv
