#include "batch/cuda_warmup.hpp"

#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>

#include "kernels/runtime/cuda_host.hpp"
#include "kernels/runtime/device_info.hpp"
#include "kernels/runtime/device_scope.hpp"

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
        const auto context_start = Clock::now();
        // The run's first device (set_default_device); each other device's
        // context is made by its own GPU thread (batch/pipeline.hpp's lanes).
        const int device = thread_device();
        make_device_context(device >= 0 ? device : probe.devices.front().index);
        spdlog::debug("CUDA start-up: devices probed in {:.0f} ms, context made in {:.0f} ms",
                      probe_ms, ms(context_start));
    };
    if (!thread_.start(warm_up)) warm_up();
}

}  // namespace cudaconv
