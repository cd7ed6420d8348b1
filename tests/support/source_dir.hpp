#pragma once
// The repository root, for the samples and fixtures the tests read: the
// environment's CUDACONV_SOURCE_DIR where set (the GPU machine runs binaries
// built elsewhere, scripts/gpu/check.sh), else the folder they were built
// from.
#include <cstdlib>
#include <filesystem>

namespace cudaconv::test {

inline std::filesystem::path source_dir() {
    const char* env = std::getenv("CUDACONV_SOURCE_DIR");
    return env ? env : CUDACONV_SOURCE_DIR;
}

}  // namespace cudaconv::test
