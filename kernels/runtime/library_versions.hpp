#pragma once
// The versions of the CUDA libraries this binary uses, for --version: the
// runtime and cuFFT it was built with, and the driver, cuDNN and nvJPEG it
// finds now. None of these initialises the CUDA runtime or needs a device,
// so they stay cheap, and none throws: a missing library or driver is an
// answer, not an error.
#include <string>

namespace cudaconv {

// A library opened at run time (dlopen), as found on this machine.
struct FoundLibrary {
    bool in_build = false;  // this build can use it at all (was built with its header)
    bool found = false;     // a file of that name loaded
    bool usable = false;    // and cudaconv can use it (the loader's problem says why not)
    std::string version;    // "9.1.0"; empty where the library did not say
};

// The CUDA runtime linked in ("13.0"), or "none" in a build without CUDA.
std::string cuda_runtime_version_string();

// cuFFT's version as the loaded library reports it ("12.0.0"), or "none".
std::string cufft_version_string();

// The newest CUDA the installed driver supports ("12.8"); empty where there
// is no driver, and in a build without CUDA.
std::string cuda_driver_version_string();

// cuDNN and nvJPEG, loaded as the variants and codecs load them (once per
// process); not in_build in a build without CUDA, nor cuDNN in one without
// cudnn.h.
FoundLibrary find_cudnn();
FoundLibrary find_nvjpeg();

}  // namespace cudaconv
