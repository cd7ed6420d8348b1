#pragma once
// What main() makes sure of before anything else runs: descriptors 0, 1
// and 2 open, and a stack limit the program can run under.
#include <cstddef>
#include <string>

namespace cudaconv {

// The least stack the main thread and every thread may have. Measured
// (the CLI tests' kinds of job: PNG, JPEG, TIFF and PFM codecs, batches,
// compare, bench, --version): on the 2-core CI machine's build without
// CUDA they pass at `ulimit -s 28` and some crash at 24; a CUDA build's
// --version crashed at 48 (cuDNN's dlopen). 1 MiB is 20 times that, for
// the paths not measured (codecs' error paths, a library's recursion),
// and an eighth of the usual 8 MiB.
constexpr std::size_t kMinStackBytes = std::size_t{1} << 20;

// Each of descriptors 0, 1 and 2 that is closed gets /dev/null, as
// coreutils' tools do: otherwise the first files opened (an output's
// temporary file, --json's) would take those numbers, and log lines and
// --timings would be written into them. Opened for the other direction
// (stdin write-only, stdout and stderr read-only), so that using one still
// fails as the closed descriptor would. Async-signal-safe; call it first.
void open_closed_standard_fds() noexcept;

// Where RLIMIT_STACK's soft limit is below `needed`, raises it (the main
// thread's stack grows against the current limit) and makes `needed` the
// default stack of new threads (which glibc sized from the limit at
// start-up). Does nothing where the limit is at least `needed` or
// unlimited, so thread stacks stay the system's default. Returns "" on
// success, else the problem (the hard limit is below `needed`), one line.
std::string ensure_stack_limit(std::size_t needed);

}  // namespace cudaconv
