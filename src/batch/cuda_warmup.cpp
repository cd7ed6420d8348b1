#include "batch/cuda_warmup.hpp"

#include <cuda_runtime.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>

#include "kernels/device_info.hpp"

namespace cudaconv {

void CudaWarmup::start() {
    if (started_) return;
    started_ = true;
    const auto warm_up = [this] {
        using Clock = std::chrono::steady_clock;
        const auto ms = [](Clock::time_point from) {
            return std::chrono::duration<double, std::milli>(Clock::now() - from).count();
        };
        const auto start = Clock::now();
        const DeviceProbe& probe = probe_devices();
        probed_.store(true, std::memory_order_release);
        if (probe.devices.empty()) return;
        const double probe_ms = ms(start);
        // cudaSetDevice makes the device's primary context (CUDA 12 on).
        const auto context_start = Clock::now();
        if (cudaSetDevice(probe.devices.front().index) != cudaSuccess) {
            cudaGetLastError();  // the variant's own run reports the problem
            return;
        }
        // Threads waiting for the GPU sleep rather than spin: a batch's GPU
        // thread waits for every image's copies, and a spinning wait takes
        // a core from the workers that decode and encode. On a context that
        // exists already the flags replace the ones it had (CUDA 12 on).
        if (cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync) != cudaSuccess) cudaGetLastError();
        // The customary no-op that makes the context, for older runtimes.
        if (cudaFree(nullptr) != cudaSuccess) cudaGetLastError();
        spdlog::debug("CUDA start-up: devices probed in {:.0f} ms, context made in {:.0f} ms",
                      probe_ms, ms(context_start));
    };
    if (!thread_.start(warm_up)) warm_up();
}

}  // namespace cudaconv
