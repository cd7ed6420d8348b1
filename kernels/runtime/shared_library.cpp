#include "kernels/runtime/shared_library.hpp"

#include <dlfcn.h>

#include <string>
#include <vector>

namespace cudaconv {

OpenedLibrary open_first_library(const std::vector<std::string>& names) {
    OpenedLibrary out;
    for (const std::string& name : names) {
        out.handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (out.handle) {
            out.name = name;
            out.first_error.clear();
            return out;
        }
        if (out.first_error.empty()) out.first_error = dlerror();
    }
    return out;
}

std::string loaded_path(const void* symbol, const std::string& fallback) {
    Dl_info info{};
    if (dladdr(symbol, &info) != 0 && info.dli_fname != nullptr) return info.dli_fname;
    return fallback;
}

}  // namespace cudaconv
