// Device discovery and the CUDA/cuFFT error helpers. The first .cu file of
// the project: it proves nvcc and cuFFT in every CI build.
#include <cuda_runtime.h>
#include <cufft.h>

#include <string>

#include "kernels/runtime/cuda_check.hpp"
#include "kernels/runtime/device_info.hpp"
#include "kernels/runtime/library_versions.hpp"

namespace cudaconv {

const char* cufft_result_name(cufftResult status) {
    switch (status) {
        case CUFFT_SUCCESS: return "CUFFT_SUCCESS";
        case CUFFT_INVALID_PLAN: return "CUFFT_INVALID_PLAN";
        case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED";
        case CUFFT_INVALID_TYPE: return "CUFFT_INVALID_TYPE";
        case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE";
        case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR";
        case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED";
        case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED";
        case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE";
        case CUFFT_UNALIGNED_DATA: return "CUFFT_UNALIGNED_DATA";
        case CUFFT_INVALID_DEVICE: return "CUFFT_INVALID_DEVICE";
        case CUFFT_NO_WORKSPACE: return "CUFFT_NO_WORKSPACE";
        case CUFFT_NOT_IMPLEMENTED: return "CUFFT_NOT_IMPLEMENTED";
        case CUFFT_NOT_SUPPORTED: return "CUFFT_NOT_SUPPORTED";
        default: return "unknown cuFFT error";
    }
}

void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line) {
    throw CudaError(std::string("CUDA error in ") + call + " at " + file + ":" +
                        std::to_string(line) + ": " + cudaGetErrorString(status),
                    status);
}

void throw_cufft_error(cufftResult status, const char* call, const char* file, int line) {
    throw CudaError(std::string("cuFFT error in ") + call + " at " + file + ":" +
                    std::to_string(line) + ": " + cufft_result_name(status));
}

const DeviceProbe& probe_devices() {
    static const DeviceProbe kProbe = [] {
        DeviceProbe probe;
        int count = 0;
        const cudaError_t status = cudaGetDeviceCount(&count);
        if (status != cudaSuccess) {
            // No driver, or a driver older than the runtime: not an error for
            // cudaconv, which then runs on the CPU. Clear the sticky state.
            cudaGetLastError();
            probe.problem = status == cudaErrorInsufficientDriver
                                ? "no CUDA driver, or one older than this build's CUDA " +
                                      cuda_runtime_version_string()
                                : cudaGetErrorString(status);
            return probe;
        }
        if (count == 0) probe.problem = "the CUDA driver reports no device";
        for (int i = 0; i < count; ++i) {
            cudaDeviceProp prop{};
            if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
            DeviceInfo info;
            info.index = i;
            info.name = prop.name;
            info.cc_major = prop.major;
            info.cc_minor = prop.minor;
            info.multiprocessors = prop.multiProcessorCount;
            info.global_memory_bytes = prop.totalGlobalMem;
            info.l2_bytes = static_cast<std::size_t>(prop.l2CacheSize);
            info.constant_memory_bytes = prop.totalConstMem;
            info.shared_memory_per_block_optin = prop.sharedMemPerBlockOptin;
            probe.devices.push_back(info);
        }
        return probe;
    }();
    return kProbe;
}

}  // namespace cudaconv
