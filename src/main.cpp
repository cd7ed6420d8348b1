// cudaconv's entry point: the only place that catches, logs one line and
// turns the failure into docs/SPEC.md's exit code.
#include <cstdio>
#include <string>

#include "base/errors.hpp"
#include "base/process_exit.hpp"
#include "base/process_start.hpp"
#include "cli/app.hpp"

int main(int argc, char** argv) {
    // Before anything opens a file or starts a thread (docs/SPEC.md,
    // "Hostile input and limits").
    cudaconv::open_closed_standard_fds();
    if (const std::string problem = cudaconv::ensure_stack_limit(cudaconv::kMinStackBytes);
        !problem.empty()) {
        std::fprintf(stderr, "cudaconv: error: %s\n", problem.c_str());
        return cudaconv::kExitUsage;
    }
    const int code = cudaconv::run_app(argc, argv);
    // A command that let go of what only the driver need free
    // (base/process_exit.hpp) ends here, stdout flushed by run_app.
    if (cudaconv::teardown_skipped()) cudaconv::exit_without_teardown(code);
    return code;
}
