// cudaconv's entry point: the only place that catches, logs one line and
// turns the failure into docs/SPEC.md's exit code.
#include "base/process_start.hpp"
#include "cli/app.hpp"

int main(int argc, char** argv) {
    // Before anything opens a file (docs/SPEC.md, "Hostile input and
    // limits").
    cudaconv::open_closed_standard_fds();
    return cudaconv::run_app(argc, argv);
}
