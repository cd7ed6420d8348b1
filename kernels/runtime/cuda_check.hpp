#pragma once
// Every CUDA runtime and cuFFT call goes through these: a failure becomes
// an exception carrying the call, file:line and the library's message.
#include <cuda_runtime.h>
#include <cufft.h>

#include <stdexcept>
#include <string>

namespace cudaconv {

class CudaError : public std::runtime_error {
public:
    explicit CudaError(const std::string& what, cudaError_t status = cudaErrorUnknown)
        : std::runtime_error(what), status_(status) {}
    // The runtime's code, for the few callers that recover from one
    // (cudaErrorMemoryAllocation); cudaErrorUnknown for cuFFT's and ours.
    cudaError_t status() const { return status_; }

private:
    cudaError_t status_;
};

[[noreturn]] void throw_cuda_error(cudaError_t status, const char* call, const char* file,
                                   int line);
[[noreturn]] void throw_cufft_error(cufftResult status, const char* call, const char* file,
                                    int line);
const char* cufft_result_name(cufftResult status);

}  // namespace cudaconv

#define CUDA_CHECK(call)                                                         \
    do {                                                                         \
        const cudaError_t cc_status_ = (call);                                   \
        if (cc_status_ != cudaSuccess)                                           \
            ::cudaconv::throw_cuda_error(cc_status_, #call, __FILE__, __LINE__); \
    } while (0)

// After every kernel launch: launch-configuration errors surface here.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

#define CUFFT_CHECK(call)                                                         \
    do {                                                                          \
        const cufftResult cc_status_ = (call);                                    \
        if (cc_status_ != CUFFT_SUCCESS)                                          \
            ::cudaconv::throw_cufft_error(cc_status_, #call, __FILE__, __LINE__); \
    } while (0)
