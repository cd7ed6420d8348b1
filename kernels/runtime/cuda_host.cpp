#include "kernels/runtime/cuda_host.hpp"

#include <cuda_runtime.h>

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

}  // namespace cudaconv
