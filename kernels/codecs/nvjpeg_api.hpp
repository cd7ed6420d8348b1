#pragma once
// The part of nvJPEG's C API that cudaconv calls, declared here because
// nvjpeg.h is not installed where cudaconv is built: nvJPEG is opened at
// run time (nvjpeg_loader.hpp), like cuDNN, where the machine has it.
//
// Every name and value is nvjpeg.h's own (but for its two macros) (CUDA 12 and 13), in namespace
// cudaconv::nvj. scripts/gpu/nvjpeg_header_check.cpp proves them against
// the real header on the GPU machine (scripts/gpu/check.sh compiles it):
// each enumerator's value, each struct's layout, and each function's
// parameter list, which is written once, in CUDACONV_NVJPEG_FUNCTIONS, and
// compiled there against the header's own types.
#include <driver_types.h>   // cudaStream_t
#include <library_types.h>  // libraryPropertyType

#include <cstddef>

namespace cudaconv::nvj {

typedef enum {
    NVJPEG_STATUS_SUCCESS = 0,
    NVJPEG_STATUS_NOT_INITIALIZED = 1,
    NVJPEG_STATUS_INVALID_PARAMETER = 2,
    NVJPEG_STATUS_BAD_JPEG = 3,
    NVJPEG_STATUS_JPEG_NOT_SUPPORTED = 4,
    NVJPEG_STATUS_ALLOCATOR_FAILURE = 5,
    NVJPEG_STATUS_EXECUTION_FAILED = 6,
    NVJPEG_STATUS_ARCH_MISMATCH = 7,
    NVJPEG_STATUS_INTERNAL_ERROR = 8,
    NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED = 9,
    NVJPEG_STATUS_INCOMPLETE_BITSTREAM = 10
} nvjpegStatus_t;

typedef enum {
    NVJPEG_CSS_444 = 0,
    NVJPEG_CSS_422 = 1,
    NVJPEG_CSS_420 = 2,
    NVJPEG_CSS_440 = 3,
    NVJPEG_CSS_411 = 4,
    NVJPEG_CSS_410 = 5,
    NVJPEG_CSS_GRAY = 6,
    NVJPEG_CSS_410V = 7,
    NVJPEG_CSS_UNKNOWN = -1
} nvjpegChromaSubsampling_t;

typedef enum {
    NVJPEG_OUTPUT_UNCHANGED = 0,
    NVJPEG_OUTPUT_YUV = 1,
    NVJPEG_OUTPUT_Y = 2,
    NVJPEG_OUTPUT_RGB = 3,
    NVJPEG_OUTPUT_BGR = 4,
    NVJPEG_OUTPUT_RGBI = 5,
    NVJPEG_OUTPUT_BGRI = 6
} nvjpegOutputFormat_t;

typedef enum {
    NVJPEG_BACKEND_DEFAULT = 0,
    NVJPEG_BACKEND_HYBRID = 1,
    NVJPEG_BACKEND_GPU_HYBRID = 2,
    NVJPEG_BACKEND_HARDWARE = 3
} nvjpegBackend_t;

typedef enum {
    NVJPEG_ENCODING_UNKNOWN = 0x0,
    NVJPEG_ENCODING_BASELINE_DCT = 0xc0,
    NVJPEG_ENCODING_EXTENDED_SEQUENTIAL_DCT_HUFFMAN = 0xc1,
    NVJPEG_ENCODING_PROGRESSIVE_DCT_HUFFMAN = 0xc2
} nvjpegJpegEncoding_t;

typedef enum {
    NVJPEG_INPUT_RGB = 3,
    NVJPEG_INPUT_BGR = 4,
    NVJPEG_INPUT_RGBI = 5,
    NVJPEG_INPUT_BGRI = 6
} nvjpegInputFormat_t;

// nvjpeg.h's macros NVJPEG_FLAGS_DEFAULT, NVJPEG_FLAGS_HW_DECODE_NO_PIPELINE
// and NVJPEG_MAX_COMPONENT.
constexpr unsigned int kFlagsDefault = 0;
constexpr unsigned int kFlagsHwDecodeNoPipeline = 1;
constexpr int kMaxComponent = 4;

typedef struct {
    unsigned char* channel[kMaxComponent];
    size_t pitch[kMaxComponent];
} nvjpegImage_t;

typedef int (*tDevMalloc)(void**, size_t);
typedef int (*tDevFree)(void*);
typedef int (*tPinnedMalloc)(void**, size_t, unsigned int flags);
typedef int (*tPinnedFree)(void*);
typedef struct {
    tDevMalloc dev_malloc;
    tDevFree dev_free;
} nvjpegDevAllocator_t;
typedef struct {
    tPinnedMalloc pinned_malloc;
    tPinnedFree pinned_free;
} nvjpegPinnedAllocator_t;

struct nvjpegHandle;
typedef struct nvjpegHandle* nvjpegHandle_t;
struct nvjpegJpegState;
typedef struct nvjpegJpegState* nvjpegJpegState_t;
struct nvjpegJpegStream;
typedef struct nvjpegJpegStream* nvjpegJpegStream_t;
struct nvjpegEncoderState;
typedef struct nvjpegEncoderState* nvjpegEncoderState_t;
struct nvjpegEncoderParams;
typedef struct nvjpegEncoderParams* nvjpegEncoderParams_t;

}  // namespace cudaconv::nvj

// Every nvJPEG function cudaconv calls, as X(name, (parameters)); each
// returns nvjpegStatus_t. Written once, read twice: in namespace
// cudaconv::nvj for the loader's function pointers, and at global scope,
// against nvjpeg.h, by scripts/gpu/nvjpeg_header_check.cpp.
#define CUDACONV_NVJPEG_FUNCTIONS(X)                                                              \
    X(nvjpegGetProperty, (libraryPropertyType, int*))                                             \
    X(nvjpegCreateEx, (nvjpegBackend_t, nvjpegDevAllocator_t*, nvjpegPinnedAllocator_t*,          \
                       unsigned int, nvjpegHandle_t*))                                            \
    X(nvjpegDestroy, (nvjpegHandle_t))                                                            \
    X(nvjpegGetHardwareDecoderInfo, (nvjpegHandle_t, unsigned int*, unsigned int*))               \
    X(nvjpegJpegStateCreate, (nvjpegHandle_t, nvjpegJpegState_t*))                                \
    X(nvjpegJpegStateDestroy, (nvjpegJpegState_t))                                                \
    X(nvjpegDecode, (nvjpegHandle_t, nvjpegJpegState_t, const unsigned char*, size_t,             \
                     nvjpegOutputFormat_t, nvjpegImage_t*, cudaStream_t))                         \
    X(nvjpegDecodeBatchedInitialize,                                                              \
      (nvjpegHandle_t, nvjpegJpegState_t, int, int, nvjpegOutputFormat_t))                        \
    X(nvjpegDecodeBatched, (nvjpegHandle_t, nvjpegJpegState_t, const unsigned char* const*,       \
                            const size_t*, nvjpegImage_t*, cudaStream_t))                         \
    X(nvjpegDecodeBatchedPreAllocate, (nvjpegHandle_t, nvjpegJpegState_t, int, int, int,          \
                                       nvjpegChromaSubsampling_t, nvjpegOutputFormat_t))          \
    X(nvjpegJpegStreamCreate, (nvjpegHandle_t, nvjpegJpegStream_t*))                              \
    X(nvjpegJpegStreamDestroy, (nvjpegJpegStream_t))                                              \
    X(nvjpegJpegStreamParse,                                                                      \
      (nvjpegHandle_t, const unsigned char*, size_t, int, int, nvjpegJpegStream_t))               \
    X(nvjpegJpegStreamGetJpegEncoding, (nvjpegJpegStream_t, nvjpegJpegEncoding_t*))               \
    X(nvjpegJpegStreamGetFrameDimensions, (nvjpegJpegStream_t, unsigned int*, unsigned int*))     \
    X(nvjpegJpegStreamGetComponentsNum, (nvjpegJpegStream_t, unsigned int*))                      \
    X(nvjpegJpegStreamGetSamplePrecision, (nvjpegJpegStream_t, unsigned int*))                    \
    X(nvjpegJpegStreamGetChromaSubsampling, (nvjpegJpegStream_t, nvjpegChromaSubsampling_t*))     \
    X(nvjpegDecodeBatchedSupported, (nvjpegHandle_t, nvjpegJpegStream_t, int*))                   \
    X(nvjpegEncoderStateCreate, (nvjpegHandle_t, nvjpegEncoderState_t*, cudaStream_t))            \
    X(nvjpegEncoderStateDestroy, (nvjpegEncoderState_t))                                          \
    X(nvjpegEncoderParamsCreate, (nvjpegHandle_t, nvjpegEncoderParams_t*, cudaStream_t))          \
    X(nvjpegEncoderParamsDestroy, (nvjpegEncoderParams_t))                                        \
    X(nvjpegEncoderParamsSetQuality, (nvjpegEncoderParams_t, const int, cudaStream_t))            \
    X(nvjpegEncoderParamsSetSamplingFactors,                                                      \
      (nvjpegEncoderParams_t, const nvjpegChromaSubsampling_t, cudaStream_t))                     \
    X(nvjpegEncodeImage, (nvjpegHandle_t, nvjpegEncoderState_t, const nvjpegEncoderParams_t,      \
                          const nvjpegImage_t*, nvjpegInputFormat_t, int, int, cudaStream_t))     \
    X(nvjpegEncodeYUV, (nvjpegHandle_t, nvjpegEncoderState_t, const nvjpegEncoderParams_t,        \
                        const nvjpegImage_t*, nvjpegChromaSubsampling_t, int, int, cudaStream_t)) \
    X(nvjpegEncodeRetrieveBitstream,                                                              \
      (nvjpegHandle_t, nvjpegEncoderState_t, unsigned char*, size_t*, cudaStream_t))

namespace cudaconv::nvj {

// The loaded library's entry points, one member a function, named as in
// nvjpeg.h.
struct Api {
#define CUDACONV_NVJPEG_MEMBER(name, params) nvjpegStatus_t(*name) params = nullptr;
    CUDACONV_NVJPEG_FUNCTIONS(CUDACONV_NVJPEG_MEMBER)
#undef CUDACONV_NVJPEG_MEMBER
};

}  // namespace cudaconv::nvj
