// cudaconv's entry point: the only place that catches, logs one line and
// turns the failure into docs/SPEC.md's exit code.
#include "cli/app.hpp"

int main(int argc, char** argv) { return cudaconv::run_app(argc, argv); }
