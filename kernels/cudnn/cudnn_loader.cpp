#include "kernels/cudnn/cudnn_loader.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "kernels/runtime/cuda_check.hpp"
#include "kernels/runtime/shared_library.hpp"

namespace cudaconv {
namespace {

#if CUDACONV_HAVE_CUDNN

// The legacy convolution API lives in these; libcudnn.so.9 is only a shim
// that loads them from its own folder at cudnnCreate, so a partial install
// would otherwise fail only then, with a less clear message.
constexpr const char* kSublibraries[] = {"libcudnn_graph.so.9", "libcudnn_ops.so.9",
                                         "libcudnn_cnn.so.9"};

std::string version_text(long version) {
    return fmt::format("{}.{}.{}", version / 10000, version % 10000 / 100, version % 100);
}

std::string folder_of(const std::string& path) {
    const std::size_t slash = path.rfind('/');
    return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

#endif

}  // namespace

std::vector<std::string> default_cudnn_names() { return {"libcudnn.so.9", "libcudnn.so"}; }

CudnnLibrary open_cudnn(const std::vector<std::string>& names) {
    CudnnLibrary library;
#if !CUDACONV_HAVE_CUDNN
    (void)names;
    library.problem = "built without cuDNN headers (cudnn.h was not found at build time)";
    return library;
#else
    const OpenedLibrary opened = open_first_library(names);
    void* handle = opened.handle;
    if (!handle) {
        library.problem =
            fmt::format("cuDNN 9 not found: {}; put its folder on LD_LIBRARY_PATH",
                        opened.first_error.empty() ? "no library name given" : opened.first_error);
        return library;
    }

    // Whatever goes wrong from here, the library is closed again.
    const auto refuse = [&](std::string why) {
        dlclose(handle);
        library.problem = std::move(why);
        return library;
    };
    auto api = std::make_shared<CudnnApi>();
    std::vector<std::string> missing;
#define CUDACONV_CUDNN_RESOLVE(name)                                         \
    api->name = reinterpret_cast<decltype(api->name)>(dlsym(handle, #name)); \
    if (!api->name) missing.emplace_back(#name);
    CUDACONV_CUDNN_FUNCTIONS(CUDACONV_CUDNN_RESOLVE)
#undef CUDACONV_CUDNN_RESOLVE

    library.path =
        api->cudnnGetVersion
            ? loaded_path(reinterpret_cast<const void*>(api->cudnnGetVersion), opened.name)
            : opened.name;
    if (!missing.empty()) {
        return refuse(fmt::format("{} is not cuDNN 9: it lacks {}{}", library.path, missing.front(),
                                  missing.size() > 1
                                      ? fmt::format(" and {} more functions", missing.size() - 1)
                                      : std::string()));
    }
    library.version = static_cast<long>(api->cudnnGetVersion());
    // cuDNN 9 numbers versions major*10000 + minor*100 + patch; 8 used *1000.
    if (library.version < 90000 || library.version >= 100000) {
        return refuse(fmt::format("{} is cuDNN version {}; the cudnn variant needs cuDNN 9",
                                  library.path, library.version));
    }
    const std::string folder = folder_of(library.path);
    for (const char* sublibrary : kSublibraries) {
        const std::string path = folder + "/" + sublibrary;
        if (access(path.c_str(), R_OK) != 0) {
            return refuse(fmt::format("cuDNN {} at {} is incomplete: {} is missing beside it",
                                      version_text(library.version), library.path, sublibrary));
        }
    }
    library.api = api;
    spdlog::debug("cudnn: loaded cuDNN {} (built for CUDA runtime {}) from {}",
                  version_text(library.version), api->cudnnGetCudartVersion(), library.path);
    return library;
#endif
}

const CudnnLibrary& load_cudnn() {
    static const CudnnLibrary kLibrary = open_cudnn(default_cudnn_names());
    return kLibrary;
}

#if CUDACONV_HAVE_CUDNN
const char* cudnn_algo_name(cudnnConvolutionFwdAlgo_t algo) {
    switch (algo) {
        case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM: return "IMPLICIT_GEMM";
        case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM: return "IMPLICIT_PRECOMP_GEMM";
        case CUDNN_CONVOLUTION_FWD_ALGO_GEMM: return "GEMM";
        case CUDNN_CONVOLUTION_FWD_ALGO_DIRECT: return "DIRECT";
        case CUDNN_CONVOLUTION_FWD_ALGO_FFT: return "FFT";
        case CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING: return "FFT_TILING";
        case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD: return "WINOGRAD";
        case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED: return "WINOGRAD_NONFUSED";
        default: return "unknown";
    }
}

void throw_cudnn_error(cudnnStatus_t status, const char* call, const char* file, int line) {
    const CudnnLibrary& library = load_cudnn();
    std::string message = fmt::format("cuDNN error in {} at {}:{}: ", call, file, line);
    if (!library.api) {
        message += fmt::format("status {}", static_cast<int>(status));
    } else {
        message += library.api->cudnnGetErrorString(status);
        // cuDNN 9 keeps a sentence on what was wrong; it names the bad parameter.
        char detail[512] = {};
        library.api->cudnnGetLastErrorString(detail, sizeof detail);
        if (detail[0] != '\0') message += fmt::format(" ({})", detail);
    }
    throw CudaError(message);
}
#endif

}  // namespace cudaconv
