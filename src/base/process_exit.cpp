#include "base/process_exit.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace cudaconv {
namespace {

std::atomic<bool> g_skip_teardown{false};

}  // namespace

bool skip_teardown_at_exit() {
    if (const char* teardown = std::getenv("CUDACONV_TEARDOWN"); teardown && *teardown) {
        return false;
    }
    g_skip_teardown = true;
    return true;
}

bool teardown_skipped() { return g_skip_teardown; }

void exit_without_teardown(int code) {
    std::fflush(nullptr);
    ::_exit(code);
}

}  // namespace cudaconv
