#pragma once
// How the process ends once a command has done its work. A batch whose
// JPEGs the GPU decoded holds nvJPEG's decoders, their device buffers and
// the CUDA context; freeing them one by one takes longer than the driver
// takes to reclaim them all at exit (docs/PERFORMANCE.md). Such a command
// lets go of them and asks for the teardown to be skipped; main() then
// ends the process with _exit once run_app has flushed stdout, so that no
// destructor of a static object and none of CUDA's teardown runs.

namespace cudaconv {

// Asks main() to end without the teardown, and says yes; false, with
// nothing asked, where CUDACONV_TEARDOWN is set (to anything but ""), for
// leak checkers (compute-sanitizer --leak-check full), which need every
// free.
bool skip_teardown_at_exit();

// Whether a command asked for it.
bool teardown_skipped();

// Flushes C's streams and ends the process with `code`, running nothing
// else. For main() alone.
[[noreturn]] void exit_without_teardown(int code);

}  // namespace cudaconv
