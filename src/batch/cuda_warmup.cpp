#include "batch/cuda_warmup.hpp"

#include <cuda_runtime.h>

#include "kernels/device_info.hpp"

namespace cudaconv {

void CudaWarmup::start() {
    if (thread_.joinable()) return;
    thread_ = std::thread([] {
        const DeviceProbe& probe = probe_devices();
        if (probe.devices.empty()) return;
        // cudaFree(nullptr) is the customary no-op that creates the context.
        if (cudaSetDevice(probe.devices.front().index) != cudaSuccess ||
            cudaFree(nullptr) != cudaSuccess) {
            cudaGetLastError();  // the variant's own run reports the problem
        }
    });
}

CudaWarmup::~CudaWarmup() {
    if (thread_.joinable()) thread_.join();
}

}  // namespace cudaconv
