// cudaconv's entry point: the only place that catches, logs one line and
// turns the failure into docs/SPEC.md's exit code.
#include <cstdio>
#include <string>

#include "base/errors.hpp"
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
    return cudaconv::run_app(argc, argv);
}
