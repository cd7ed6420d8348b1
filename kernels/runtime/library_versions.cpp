#include "kernels/runtime/library_versions.hpp"

#include <cuda_runtime.h>
#include <cufft.h>

#include <string>

#include <fmt/format.h>

#include "kernels/codecs/nvjpeg_loader.hpp"
#include "kernels/cudnn/cudnn_loader.hpp"
#include "kernels/fft/cufft_loader.hpp"

namespace cudaconv {
namespace {

// CUDA's numbering of the runtime and the driver: 12080 is 12.8.
std::string cuda_version_text(int version) {
    return fmt::format("{}.{}", version / 1000, version % 1000 / 10);
}

// cudnnGetVersion's number: cuDNN 9 counts major*10000 + minor*100 + patch
// (90100 is 9.1.0), cuDNN 8 and before major*1000 + minor*100 + patch.
std::string cudnn_version_text(long version) {
    if (version >= 10000) {
        return fmt::format("{}.{}.{}", version / 10000, version % 10000 / 100, version % 100);
    }
    return fmt::format("{}.{}.{}", version / 1000, version % 1000 / 100, version % 100);
}

}  // namespace

std::string cuda_runtime_version_string() {
    // CUDART_VERSION is the runtime linked in (statically), e.g. 13000.
    return cuda_version_text(CUDART_VERSION);
}

std::string cufft_version_string() {
    const CufftLibrary& library = load_cufft();  // version 12000 is 12.0.0
    if (!library.api) return "not found";
    return fmt::format("{}.{}.{}", library.version / 1000, library.version % 1000 / 100,
                       library.version % 100);
}

std::string cuda_driver_version_string() {
    // Asks the driver library only: no context, no device. Without a driver
    // the runtime answers 0.
    int version = 0;
    if (cudaDriverGetVersion(&version) != cudaSuccess) {
        cudaGetLastError();  // not sticky, but leave nothing behind for later calls
        return "";
    }
    return version > 0 ? cuda_version_text(version) : "";
}

FoundLibrary find_cudnn() {
    const CudnnLibrary& library = load_cudnn();
    FoundLibrary found;
    found.in_build = CUDACONV_HAVE_CUDNN != 0;
    found.found = !library.path.empty();
    found.usable = library.api != nullptr;
    if (library.version > 0) found.version = cudnn_version_text(library.version);
    return found;
}

FoundLibrary find_nvjpeg() {
    const NvjpegLibrary& library = load_nvjpeg();
    FoundLibrary found;
    found.in_build = true;  // its declarations are nvjpeg_api.hpp's, never missing
    found.found = !library.path.empty();
    found.usable = library.api != nullptr;
    if (found.usable) {
        found.version = fmt::format("{}.{}.{}", library.major, library.minor, library.patch);
    }
    return found;
}

}  // namespace cudaconv
