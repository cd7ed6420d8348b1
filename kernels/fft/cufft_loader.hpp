#pragma once
// cuFFT, opened at run time as cuDNN and nvJPEG are (runtime/shared_library):
// the binary starts and runs where cuFFT is missing, or where an address
// space limit leaves no room for its 290 MB (a `cudaconv --version` under
// `ulimit -v 400000` failed in the loader before main), and only the `fft`
// variant refuses, saying why. The types are cufft.h's, from the toolkit
// the binary is built with; the functions come from the library found.
#include <cufft.h>

#include <memory>
#include <string>
#include <vector>

namespace cudaconv {

// Every cuFFT function cudaconv calls, typed by cufft.h's own declarations
// (decltype names no symbol, so nothing links against the library).
#define CUDACONV_CUFFT_FUNCTIONS(X) \
    X(cufftCreate)                  \
    X(cufftDestroy)                 \
    X(cufftSetAutoAllocation)       \
    X(cufftSetStream)               \
    X(cufftSetWorkArea)             \
    X(cufftMakePlanMany64)          \
    X(cufftExecR2C)                 \
    X(cufftExecC2R)                 \
    X(cufftGetVersion)

struct CufftApi {
#define CUDACONV_CUFFT_POINTER(name) decltype(&::name) name = nullptr;
    CUDACONV_CUFFT_FUNCTIONS(CUDACONV_CUFFT_POINTER)
#undef CUDACONV_CUFFT_POINTER
};

struct CufftLibrary {
    std::shared_ptr<const CufftApi> api;  // null when cuFFT cannot be used
    std::string problem;                  // why not, for the user; empty when api is set
    std::string path;                     // the file that was loaded
    int version = 0;                      // cufftGetVersion(): 12000 is 12.0.0
};

// The names tried in turn: the soname of the cuFFT the binary was built
// against (libcufft.so.12 for cufft.h's CUFFT_VER_MAJOR 12), then the dev
// symlink.
std::vector<std::string> default_cufft_names();

// Opens the first of `names` that loads and resolves every function. Never
// throws; the answer says what went wrong.
CufftLibrary open_cufft(const std::vector<std::string>& names);

// open_cufft(default_cufft_names()), once per process. Never closed.
const CufftLibrary& load_cufft();

}  // namespace cudaconv
