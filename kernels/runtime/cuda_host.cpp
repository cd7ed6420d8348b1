#include "kernels/runtime/cuda_host.hpp"

#include <cuda_runtime.h>

#include "kernels/runtime/cuda_check.hpp"

namespace cudaconv {

void* alloc_pinned(std::size_t bytes) {
    void* data = nullptr;
    if (cudaHostAlloc(&data, bytes, cudaHostAllocPortable) != cudaSuccess) {
        cudaGetLastError();  // not sticky
        return nullptr;
    }
    return data;
}

void free_pinned(void* data) {
    if (data != nullptr) cudaFreeHost(data);
}

bool make_device_context(int device) {
    // cudaSetDevice makes the device's primary context (CUDA 12 on).
    if (cudaSetDevice(device) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    // Threads waiting for the GPU sleep rather than spin: a batch's GPU
    // thread waits for every image's copies, and a spinning wait takes
    // a core from the workers that decode and encode. On a context that
    // exists already the flags replace the ones it had (CUDA 12 on).
    if (cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync) != cudaSuccess) cudaGetLastError();
    // The customary no-op that makes the context, for older runtimes.
    if (cudaFree(nullptr) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return true;
}

bool device_out_of_memory(const std::exception& error) {
    const auto* cuda = dynamic_cast<const CudaError*>(&error);
    return cuda != nullptr && cuda->status() == cudaErrorMemoryAllocation;
}

int runtime_device() {
    int device = -1;
    if (cudaGetDevice(&device) != cudaSuccess) {
        cudaGetLastError();
        return -1;
    }
    return device;
}

bool device_lost(const std::exception& error) {
    const auto* cuda = dynamic_cast<const CudaError*>(&error);
    if (cuda == nullptr) return false;
    // cudaErrorUnknown, sticky from the runtime, is left out: CudaError also
    // carries it for cuFFT's errors and cudaconv's own, which are not.
    switch (cuda->status()) {
        case cudaErrorIllegalAddress:
        case cudaErrorLaunchFailure:
        case cudaErrorECCUncorrectable:
        case cudaErrorHardwareStackError:
        case cudaErrorIllegalInstruction:
        case cudaErrorMisalignedAddress:
        case cudaErrorInvalidAddressSpace:
        case cudaErrorInvalidPc:
        case cudaErrorAssert: return true;
        default: return false;
    }
}

}  // namespace cudaconv
