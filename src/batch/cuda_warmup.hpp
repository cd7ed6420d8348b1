#pragma once
// CUDA start-up (the runtime, the driver's context on the first device)
// takes a noticeable time, once per process. Started on its own thread
// while the first image decodes, it is mostly paid by the time a CUDA
// variant first runs.
#include <atomic>
#include <thread>

namespace cudaconv {

class CudaWarmup {
public:
    CudaWarmup() = default;
    ~CudaWarmup();
    CudaWarmup(const CudaWarmup&) = delete;
    CudaWarmup& operator=(const CudaWarmup&) = delete;

    // Starts it in the background; without a device it only probes.
    void start();
    bool started() const { return thread_.joinable(); }
    // Whether probe_devices() has its answer, so that a call would not wait.
    bool probed() const { return probed_.load(std::memory_order_acquire); }

private:
    std::thread thread_;
    std::atomic<bool> probed_{false};
};

}  // namespace cudaconv
