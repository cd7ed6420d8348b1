#pragma once
// kernels/runtime/cuda_check.hpp's throw_cuda_error for the standalone programs
// built on the GPU machine (npp_held.cu; copy_reference.cu through
// held_timing.hpp), without the library (and fmt)
// behind it: prints the error and exits. Include it from one source file
// of a program: it defines the function.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

namespace cudaconv {
[[noreturn]] void throw_cuda_error(cudaError_t status, const char* call, const char* file,
                                   int line) {
    std::printf("CUDA %s: %s at %s:%d\n", cudaGetErrorString(status), call, file, line);
    std::exit(1);
}
}  // namespace cudaconv
