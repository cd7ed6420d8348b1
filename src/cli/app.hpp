#pragma once

namespace cudaconv {

// Parses the command line, runs the command, and returns the exit code.
// The only place that catches: one log line per failure (docs/SPEC.md codes).
int run_app(int argc, char** argv);

// Ends the process as run_app's return would (empty output folders
// removed, stdout flushed, its failure said), but without the teardown:
// no destructor runs, and the driver takes back the process's device
// memory, nvJPEG's state and the CUDA context as a whole at exit. For a
// command whose work is all written; on an H200 this saved 0.15-0.17 s of
// a 200-image batch's 1.64 s, the GPU JPEG decoder's buffers and handles
// freed one by one. Where CUDACONV_TEARDOWN is set (to anything but
// empty), it returns `code` and the teardown runs, for leak checkers
// (compute-sanitizer --leak-check full).
int exit_without_teardown(int code);

}  // namespace cudaconv
