#include "batch/cuda_warmup.hpp"

#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>

#include "kernels/cuda_host.hpp"
#include "kernels/device_info.hpp"

namespace cudaconv {

void CudaWarmup::start() {
    if (thread_.joinable()) return;
    thread_ = std::thread([this] {
        using Clock = std::chrono::steady_clock;
        const auto ms = [](Clock::time_point from) {
            return std::chrono::duration<double, std::milli>(Clock::now() - from).count();
        };
        const auto start = Clock::now();
        const DeviceProbe& probe = probe_devices();
        probed_.store(true, std::memory_order_release);
        if (probe.devices.empty()) return;
        const double probe_ms = ms(start);
        const auto context_start = Clock::now();
        make_device_context(probe.devices.front().index);
        spdlog::debug("CUDA start-up: devices probed in {:.0f} ms, context made in {:.0f} ms",
                      probe_ms, ms(context_start));
    });
}

CudaWarmup::~CudaWarmup() {
    if (thread_.joinable()) thread_.join();
}

}  // namespace cudaconv
