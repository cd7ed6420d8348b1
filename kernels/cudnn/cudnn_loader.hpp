#pragma once
// cuDNN 9, opened at run time: the binary never links libcudnn, so it runs
// on machines without it (the GPU machine has cuDNN only inside a Python
// venv that the user puts on LD_LIBRARY_PATH). The function pointers take
// their types from cudnn.h, so a signature can never drift from the header.
// Also CUDNN_CHECK, which throws like CUDA_CHECK.
//
// Built without cudnn.h (or with -DCUDACONV_WITHOUT_CUDNN, to test that
// build), everything here still compiles and load_cudnn() says why not.
#include <memory>
#include <string>
#include <vector>

#if __has_include(<cudnn.h>) && !defined(CUDACONV_WITHOUT_CUDNN)
#include <cudnn.h>
#define CUDACONV_HAVE_CUDNN 1
#else
#define CUDACONV_HAVE_CUDNN 0
#endif

namespace cudaconv {

#if CUDACONV_HAVE_CUDNN

// Every cuDNN function the project calls; each becomes a CudnnApi member of
// the same name, resolved with dlsym.
#define CUDACONV_CUDNN_FUNCTIONS(X)            \
    X(cudnnGetVersion)                         \
    X(cudnnGetCudartVersion)                   \
    X(cudnnGetErrorString)                     \
    X(cudnnGetLastErrorString)                 \
    X(cudnnCreate)                             \
    X(cudnnDestroy)                            \
    X(cudnnSetStream)                          \
    X(cudnnCreateTensorDescriptor)             \
    X(cudnnSetTensor4dDescriptor)              \
    X(cudnnDestroyTensorDescriptor)            \
    X(cudnnCreateFilterDescriptor)             \
    X(cudnnSetFilter4dDescriptor)              \
    X(cudnnDestroyFilterDescriptor)            \
    X(cudnnCreateConvolutionDescriptor)        \
    X(cudnnSetConvolution2dDescriptor)         \
    X(cudnnSetConvolutionGroupCount)           \
    X(cudnnSetConvolutionMathType)             \
    X(cudnnDestroyConvolutionDescriptor)       \
    X(cudnnGetConvolution2dForwardOutputDim)   \
    X(cudnnGetConvolutionForwardWorkspaceSize) \
    X(cudnnConvolutionForward)

struct CudnnApi {
#define CUDACONV_CUDNN_MEMBER(name) decltype(&::name) name = nullptr;
    CUDACONV_CUDNN_FUNCTIONS(CUDACONV_CUDNN_MEMBER)
#undef CUDACONV_CUDNN_MEMBER
};

#else

struct CudnnApi;  // never complete without the header: api stays null

#endif

struct CudnnLibrary {
    std::shared_ptr<const CudnnApi> api;  // null when cuDNN cannot be used
    std::string problem;                  // why not, for the user; empty when api is set
    std::string path;                     // the file that was loaded
    long version = 0;                     // cudnnGetVersion(): 90100 is 9.1.0
};

// The library names tried in turn: the cuDNN 9 soname, then the dev symlink.
std::vector<std::string> default_cudnn_names();

// Opens the first of `names` that loads, resolves every function and checks
// that it is cuDNN 9. Never throws; the answer says what went wrong.
CudnnLibrary open_cudnn(const std::vector<std::string>& names);

// open_cudnn(default_cudnn_names()), once per process. Never closed: the
// library lives as long as the process.
const CudnnLibrary& load_cudnn();

#if CUDACONV_HAVE_CUDNN
// "IMPLICIT_GEMM" for CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM: for -v's
// lines and --json's path.
const char* cudnn_algo_name(cudnnConvolutionFwdAlgo_t algo);

[[noreturn]] void throw_cudnn_error(cudnnStatus_t status, const char* call, const char* file,
                                    int line);
#endif

}  // namespace cudaconv

#if CUDACONV_HAVE_CUDNN
// Call through the loaded table: CUDNN_CHECK(api.cudnnCreate(&handle)).
#define CUDNN_CHECK(call)                                                         \
    do {                                                                          \
        const cudnnStatus_t cc_status_ = (call);                                  \
        if (cc_status_ != CUDNN_STATUS_SUCCESS)                                   \
            ::cudaconv::throw_cudnn_error(cc_status_, #call, __FILE__, __LINE__); \
    } while (0)
#endif
