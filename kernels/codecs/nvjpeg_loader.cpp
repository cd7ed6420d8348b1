#include "kernels/codecs/nvjpeg_loader.hpp"

#include <dlfcn.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "kernels/runtime/shared_library.hpp"

namespace cudaconv {

std::vector<std::string> default_nvjpeg_names() {
    return {"libnvjpeg.so.13", "libnvjpeg.so.12", "libnvjpeg.so"};
}

NvjpegLibrary open_nvjpeg(const std::vector<std::string>& names) {
    NvjpegLibrary library;
    const OpenedLibrary opened = open_first_library(names);
    void* handle = opened.handle;
    if (!handle) {
        library.problem = fmt::format(
            "nvJPEG not found: {}; it comes with the CUDA toolkit (libnvjpeg.so.13 in its lib64 "
            "folder): put that folder on LD_LIBRARY_PATH",
            opened.first_error.empty() ? "no library name given" : opened.first_error);
        return library;
    }

    auto api = std::make_shared<nvj::Api>();
    std::vector<std::string> missing;
#define CUDACONV_NVJPEG_RESOLVE(name, params)                                \
    api->name = reinterpret_cast<decltype(api->name)>(dlsym(handle, #name)); \
    if (!api->name) missing.emplace_back(#name);
    CUDACONV_NVJPEG_FUNCTIONS(CUDACONV_NVJPEG_RESOLVE)
#undef CUDACONV_NVJPEG_RESOLVE

    library.path =
        api->nvjpegGetProperty
            ? loaded_path(reinterpret_cast<const void*>(api->nvjpegGetProperty), opened.name)
            : opened.name;
    if (!missing.empty()) {
        dlclose(handle);
        library.problem = fmt::format(
            "{} is not an nvJPEG cudaconv can use: it lacks {}{}", library.path, missing.front(),
            missing.size() > 1 ? fmt::format(" and {} more functions", missing.size() - 1)
                               : std::string());
        return library;
    }
    api->nvjpegGetProperty(MAJOR_VERSION, &library.major);
    api->nvjpegGetProperty(MINOR_VERSION, &library.minor);
    api->nvjpegGetProperty(PATCH_LEVEL, &library.patch);
    library.api = api;
    spdlog::debug("nvjpeg: loaded nvJPEG {}.{}.{} from {}", library.major, library.minor,
                  library.patch, library.path);
    return library;
}

const NvjpegLibrary& load_nvjpeg() {
    static const NvjpegLibrary kLibrary = open_nvjpeg(default_nvjpeg_names());
    return kLibrary;
}

std::string nvjpeg_status_name(nvj::nvjpegStatus_t status) {
    switch (status) {
        case nvj::NVJPEG_STATUS_SUCCESS: return "NVJPEG_STATUS_SUCCESS";
        case nvj::NVJPEG_STATUS_NOT_INITIALIZED: return "NVJPEG_STATUS_NOT_INITIALIZED";
        case nvj::NVJPEG_STATUS_INVALID_PARAMETER: return "NVJPEG_STATUS_INVALID_PARAMETER";
        case nvj::NVJPEG_STATUS_BAD_JPEG: return "NVJPEG_STATUS_BAD_JPEG";
        case nvj::NVJPEG_STATUS_JPEG_NOT_SUPPORTED: return "NVJPEG_STATUS_JPEG_NOT_SUPPORTED";
        case nvj::NVJPEG_STATUS_ALLOCATOR_FAILURE: return "NVJPEG_STATUS_ALLOCATOR_FAILURE";
        case nvj::NVJPEG_STATUS_EXECUTION_FAILED: return "NVJPEG_STATUS_EXECUTION_FAILED";
        case nvj::NVJPEG_STATUS_ARCH_MISMATCH: return "NVJPEG_STATUS_ARCH_MISMATCH";
        case nvj::NVJPEG_STATUS_INTERNAL_ERROR: return "NVJPEG_STATUS_INTERNAL_ERROR";
        case nvj::NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED:
            return "NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED";
        case nvj::NVJPEG_STATUS_INCOMPLETE_BITSTREAM: return "NVJPEG_STATUS_INCOMPLETE_BITSTREAM";
    }
    return fmt::format("nvJPEG status {}", static_cast<int>(status));
}

}  // namespace cudaconv
