#pragma once
// nvJPEG, opened at run time: the binary never links libnvjpeg, so it
// builds where nvjpeg.h is missing (the declarations are nvjpeg_api.hpp's)
// and runs where the library is missing, decoding and encoding JPEG on the
// CPU instead.
#include <memory>
#include <string>
#include <vector>

#include "kernels/codecs/nvjpeg_api.hpp"

namespace cudaconv {

struct NvjpegLibrary {
    std::shared_ptr<const nvj::Api> api;  // null when nvJPEG cannot be used
    std::string problem;                  // why not, for the user; empty when api is set
    std::string path;                     // the file that was loaded
    int major = 0, minor = 0, patch = 0;  // nvjpegGetProperty's version
};

// The library names tried in turn: the CUDA 13 and 12 sonames, then the
// dev symlink.
std::vector<std::string> default_nvjpeg_names();

// Opens the first of `names` that loads and resolves every function of
// CUDACONV_NVJPEG_FUNCTIONS. Never throws; the answer says what went wrong.
NvjpegLibrary open_nvjpeg(const std::vector<std::string>& names);

// open_nvjpeg(default_nvjpeg_names()), once per process, never closed.
const NvjpegLibrary& load_nvjpeg();

// nvjpegStatus_t's name ("NVJPEG_STATUS_BAD_JPEG"), or its number.
std::string nvjpeg_status_name(nvj::nvjpegStatus_t status);

}  // namespace cudaconv
