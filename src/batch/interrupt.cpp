#include "batch/interrupt.hpp"

#include <atomic>
#include <csignal>
#include <cstring>
#include <string>

#include "io/image_io.hpp"

namespace cudaconv {
namespace {

// Lock-free atomics: all a signal handler may touch.
std::atomic<bool> g_graceful{false};
std::atomic<int> g_requested_by{0};
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<bool>::is_always_lock_free);

// The first of these asks a batch to stop.
constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};
// The other signals whose default action ends the process and that a
// handler can catch, the faults last. Their handler runs once: the
// signal's own action is back in place when it starts (SA_RESETHAND), and
// the signal is not held back while it runs (SA_NODEFER), so the raise at
// its end takes that action at once, a fault's core dump included.
constexpr int kEndingSignals[] = {SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF,
                                  SIGXCPU, SIGABRT, SIGSEGV, SIGBUS,  SIGFPE,    SIGILL};

bool asks_to_stop(int signal_number) {
    for (const int s : kStopSignals) {
        if (s == signal_number) return true;
    }
    return false;
}

void set_action(int signal_number, void (*handler)(int), int flags) {
    struct sigaction action {};
    action.sa_handler = handler;
    sigemptyset(&action.sa_mask);
    action.sa_flags = flags;
    sigaction(signal_number, &action, nullptr);
}

// Only async-signal-safe calls: atomics, unlink (in
// remove_pending_temp_files), sigaction and raise.
extern "C" void on_signal(int signal_number) {
    int none = 0;
    if (asks_to_stop(signal_number) && g_graceful.load() &&
        g_requested_by.compare_exchange_strong(none, signal_number)) {
        return;  // the batch sees it and winds down
    }
    // An interrupted write must not leave its temporary file behind.
    remove_pending_temp_files();
    set_action(signal_number, SIG_DFL, 0);
    // Taken at once where the signal is not held back (SA_NODEFER), else
    // as the handler returns.
    raise(signal_number);
}

// A signal the process started with ignored stays ignored (nohup leaves
// SIGHUP so, a shell SIGINT and SIGQUIT for a command run in the background).
void handle(int signal_number, int flags) {
    struct sigaction inherited {};
    if (sigaction(signal_number, nullptr, &inherited) == 0 && inherited.sa_handler == SIG_IGN) {
        return;
    }
    set_action(signal_number, on_signal, flags);
}

}  // namespace

void install_interrupt_handler() {
    // Reads and writes that a handler interrupts are restarted (as glibc's
    // signal() did for SIGINT and SIGTERM), so that a stop request does not
    // fail them with EINTR.
    for (const int s : kStopSignals) handle(s, SA_RESTART);
    for (const int s : kEndingSignals) handle(s, SA_RESETHAND | SA_NODEFER);
    set_action(SIGXFSZ, SIG_IGN, 0);
    set_action(SIGPIPE, SIG_IGN, 0);
}

std::string signal_name(int signal_number) {
    const char* abbreviation = sigabbrev_np(signal_number);
    return abbreviation ? std::string("SIG") + abbreviation
                        : "signal " + std::to_string(signal_number);
}

GracefulStop::GracefulStop() {
    g_requested_by.store(0);
    g_graceful.store(true);
}

GracefulStop::~GracefulStop() { g_graceful.store(false); }

bool GracefulStop::requested() const { return g_requested_by.load() != 0; }

int GracefulStop::signal_number() const { return g_requested_by.load(); }

}  // namespace cudaconv
