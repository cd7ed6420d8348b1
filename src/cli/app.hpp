#pragma once

namespace cudaconv {

// Parses the command line, runs the command, and returns the exit code.
// The only place that catches: one log line per failure (docs/SPEC.md codes).
int run_app(int argc, char** argv);

}  // namespace cudaconv
