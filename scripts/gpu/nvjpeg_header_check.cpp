// Proves kernels/codecs/nvjpeg_api.hpp against the real nvjpeg.h, which only
// the GPU machine has: this file compiles there (scripts/gpu/check.sh) or
// names the declaration that drifted. It is compiled, never run.
#include <nvjpeg.h>

#include <cstddef>
#include <type_traits>

#include "kernels/codecs/nvjpeg_api.hpp"

namespace ours = cudaconv::nvj;

// Each function's parameter list, as CUDACONV_NVJPEG_FUNCTIONS writes it,
// read here at global scope, where its type names are nvjpeg.h's.
#define CUDACONV_CHECK_FUNCTION(name, params)                                  \
    static_assert(std::is_same_v<decltype(&::name), nvjpegStatus_t(*) params>, \
                  #name ": parameters differ from nvjpeg.h");
CUDACONV_NVJPEG_FUNCTIONS(CUDACONV_CHECK_FUNCTION)
#undef CUDACONV_CHECK_FUNCTION

// Each enumeration: the same size and signedness, each enumerator the same
// value.
#define CUDACONV_CHECK_ENUM(type)                                                \
    static_assert(sizeof(ours::type) == sizeof(::type), #type ": size differs"); \
    static_assert(std::is_signed_v<std::underlying_type_t<ours::type>> ==        \
                      std::is_signed_v<std::underlying_type_t<::type>>,          \
                  #type ": signedness differs");
CUDACONV_CHECK_ENUM(nvjpegStatus_t)
CUDACONV_CHECK_ENUM(nvjpegChromaSubsampling_t)
CUDACONV_CHECK_ENUM(nvjpegOutputFormat_t)
CUDACONV_CHECK_ENUM(nvjpegBackend_t)
CUDACONV_CHECK_ENUM(nvjpegJpegEncoding_t)
CUDACONV_CHECK_ENUM(nvjpegInputFormat_t)
#undef CUDACONV_CHECK_ENUM

#define CUDACONV_CHECK_VALUE(name)                                            \
    static_assert(static_cast<long>(ours::name) == static_cast<long>(::name), \
                  #name ": value differs");
CUDACONV_CHECK_VALUE(NVJPEG_STATUS_SUCCESS)
CUDACONV_CHECK_VALUE(NVJPEG_STATUS_NOT_INITIALIZED)
CUDACONV_CHECK_VALUE(NVJPEG_STATUS_INVALID_PARAMETER)
CUDACONV_CHECK_VALUE(NVJPEG_STATUS_BAD_JPEG)
CUDACONV_CHECK_VALUE(NVJPEG_STATUS_JPEG_NOT_SUPPORTED)
CUDACONV_CHECK_VALUE(NVJPEG_STATUS_ALLOCATOR_FAILURE)
CUDACONV_CHECK_VALUE(NVJPEG_STATUS_EXECUTION_FAILED)
CUDACONV_CHECK_VALUE(NVJPEG_STATUS_ARCH_MISMATCH)
CUDACONV_CHECK_VALUE(NVJPEG_STATUS_INTERNAL_ERROR)
CUDACONV_CHECK_VALUE(NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED)
CUDACONV_CHECK_VALUE(NVJPEG_STATUS_INCOMPLETE_BITSTREAM)
CUDACONV_CHECK_VALUE(NVJPEG_CSS_444)
CUDACONV_CHECK_VALUE(NVJPEG_CSS_422)
CUDACONV_CHECK_VALUE(NVJPEG_CSS_420)
CUDACONV_CHECK_VALUE(NVJPEG_CSS_440)
CUDACONV_CHECK_VALUE(NVJPEG_CSS_411)
CUDACONV_CHECK_VALUE(NVJPEG_CSS_410)
CUDACONV_CHECK_VALUE(NVJPEG_CSS_GRAY)
CUDACONV_CHECK_VALUE(NVJPEG_CSS_410V)
CUDACONV_CHECK_VALUE(NVJPEG_CSS_UNKNOWN)
CUDACONV_CHECK_VALUE(NVJPEG_OUTPUT_UNCHANGED)
CUDACONV_CHECK_VALUE(NVJPEG_OUTPUT_YUV)
CUDACONV_CHECK_VALUE(NVJPEG_OUTPUT_Y)
CUDACONV_CHECK_VALUE(NVJPEG_OUTPUT_RGB)
CUDACONV_CHECK_VALUE(NVJPEG_OUTPUT_BGR)
CUDACONV_CHECK_VALUE(NVJPEG_OUTPUT_RGBI)
CUDACONV_CHECK_VALUE(NVJPEG_OUTPUT_BGRI)
CUDACONV_CHECK_VALUE(NVJPEG_BACKEND_DEFAULT)
CUDACONV_CHECK_VALUE(NVJPEG_BACKEND_HYBRID)
CUDACONV_CHECK_VALUE(NVJPEG_BACKEND_GPU_HYBRID)
CUDACONV_CHECK_VALUE(NVJPEG_BACKEND_HARDWARE)
CUDACONV_CHECK_VALUE(NVJPEG_ENCODING_UNKNOWN)
CUDACONV_CHECK_VALUE(NVJPEG_ENCODING_BASELINE_DCT)
CUDACONV_CHECK_VALUE(NVJPEG_ENCODING_EXTENDED_SEQUENTIAL_DCT_HUFFMAN)
CUDACONV_CHECK_VALUE(NVJPEG_ENCODING_PROGRESSIVE_DCT_HUFFMAN)
CUDACONV_CHECK_VALUE(NVJPEG_INPUT_RGB)
CUDACONV_CHECK_VALUE(NVJPEG_INPUT_BGR)
CUDACONV_CHECK_VALUE(NVJPEG_INPUT_RGBI)
CUDACONV_CHECK_VALUE(NVJPEG_INPUT_BGRI)
#undef CUDACONV_CHECK_VALUE
static_assert(ours::kFlagsDefault == NVJPEG_FLAGS_DEFAULT, "NVJPEG_FLAGS_DEFAULT differs");
static_assert(ours::kFlagsHwDecodeNoPipeline == NVJPEG_FLAGS_HW_DECODE_NO_PIPELINE,
              "NVJPEG_FLAGS_HW_DECODE_NO_PIPELINE differs");
static_assert(ours::kMaxComponent == NVJPEG_MAX_COMPONENT, "NVJPEG_MAX_COMPONENT differs");

// The structs passed by pointer: the same layout.
static_assert(sizeof(ours::nvjpegImage_t) == sizeof(::nvjpegImage_t), "nvjpegImage_t: size");
static_assert(offsetof(ours::nvjpegImage_t, channel) == offsetof(::nvjpegImage_t, channel),
              "nvjpegImage_t: channel");
static_assert(offsetof(ours::nvjpegImage_t, pitch) == offsetof(::nvjpegImage_t, pitch),
              "nvjpegImage_t: pitch");
static_assert(sizeof(ours::nvjpegDevAllocator_t) == sizeof(::nvjpegDevAllocator_t),
              "nvjpegDevAllocator_t: size");
static_assert(sizeof(ours::nvjpegPinnedAllocator_t) == sizeof(::nvjpegPinnedAllocator_t),
              "nvjpegPinnedAllocator_t: size");
static_assert(std::is_same_v<ours::tDevMalloc, ::tDevMalloc> &&
                  std::is_same_v<ours::tDevFree, ::tDevFree> &&
                  std::is_same_v<ours::tPinnedMalloc, ::tPinnedMalloc> &&
                  std::is_same_v<ours::tPinnedFree, ::tPinnedFree>,
              "allocator callbacks differ");

int main() { return 0; }
