#pragma once
// Opening the libraries cudaconv loads at run time (cuDNN, cuFFT, nvJPEG),
// so that the binary builds and runs where they are missing.
#include <string>
#include <vector>

namespace cudaconv {

struct OpenedLibrary {
    void* handle = nullptr;   // dlopen's, null when none of the names loaded
    std::string name;         // the name that loaded
    std::string first_error;  // dlerror() of the first name tried, when none loaded
};

// dlopen's each of `names` in turn, RTLD_NOW | RTLD_LOCAL (the library's
// symbols stay out of the global namespace), and keeps the first that loads.
OpenedLibrary open_first_library(const std::vector<std::string>& names);

// The file the dynamic linker loaded `symbol` from, or `fallback`.
std::string loaded_path(const void* symbol, const std::string& fallback);

}  // namespace cudaconv
