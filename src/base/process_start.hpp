#pragma once
// What main() makes sure of before anything else runs: descriptors 0, 1
// and 2 open.

namespace cudaconv {

// Each of descriptors 0, 1 and 2 that is closed gets /dev/null, as
// coreutils' tools do: otherwise the first files opened (an output's
// temporary file, --json's) would take those numbers, and log lines and
// --timings would be written into them. Async-signal-safe; call it first.
void open_closed_standard_fds() noexcept;

}  // namespace cudaconv
