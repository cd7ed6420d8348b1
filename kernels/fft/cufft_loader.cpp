#include "kernels/fft/cufft_loader.hpp"

#include <dlfcn.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "kernels/runtime/shared_library.hpp"

namespace cudaconv {

std::vector<std::string> default_cufft_names() {
    return {fmt::format("libcufft.so.{}", CUFFT_VER_MAJOR), "libcufft.so"};
}

CufftLibrary open_cufft(const std::vector<std::string>& names) {
    CufftLibrary library;
    const OpenedLibrary opened = open_first_library(names);
    if (!opened.handle) {
        library.problem = fmt::format(
            "cuFFT not found: {}; it comes with the CUDA toolkit (libcufft.so.{} in its lib64 "
            "folder): put that folder on LD_LIBRARY_PATH",
            opened.first_error.empty() ? "no library name given" : opened.first_error,
            CUFFT_VER_MAJOR);
        return library;
    }
    auto api = std::make_shared<CufftApi>();
    std::vector<std::string> missing;
#define CUDACONV_CUFFT_RESOLVE(name)                                                \
    api->name = reinterpret_cast<decltype(api->name)>(dlsym(opened.handle, #name)); \
    if (!api->name) missing.emplace_back(#name);
    CUDACONV_CUFFT_FUNCTIONS(CUDACONV_CUFFT_RESOLVE)
#undef CUDACONV_CUFFT_RESOLVE

    library.path =
        api->cufftGetVersion
            ? loaded_path(reinterpret_cast<const void*>(api->cufftGetVersion), opened.name)
            : opened.name;
    if (!missing.empty()) {
        dlclose(opened.handle);
        library.problem = fmt::format(
            "{} is not a cuFFT cudaconv can use: it lacks {}{}", library.path, missing.front(),
            missing.size() > 1 ? fmt::format(" and {} more functions", missing.size() - 1)
                               : std::string());
        return library;
    }
    if (api->cufftGetVersion(&library.version) != CUFFT_SUCCESS) library.version = 0;
    // A library of another major version has other structures behind the
    // same names: only the one cufft.h describes is used.
    if (library.version / 1000 != CUFFT_VER_MAJOR) {
        dlclose(opened.handle);
        library.problem = fmt::format("{} is cuFFT {}, not the cuFFT {} cudaconv was built with",
                                      library.path, library.version / 1000, CUFFT_VER_MAJOR);
        return library;
    }
    library.api = api;
    spdlog::debug("cufft: loaded cuFFT {} from {}", library.version, library.path);
    return library;
}

const CufftLibrary& load_cufft() {
    static const CufftLibrary kLibrary = open_cufft(default_cufft_names());
    return kLibrary;
}

}  // namespace cudaconv
