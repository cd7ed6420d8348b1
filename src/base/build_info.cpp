#include "base/build_info.hpp"

#include "build_version.hpp"  // generated: <build>/generated/

namespace cudaconv {

const char* build_version() { return CUDACONV_BUILD_VERSION; }

const char* build_cuda_architectures() { return CUDACONV_BUILD_CUDA_ARCHITECTURES; }

}  // namespace cudaconv
