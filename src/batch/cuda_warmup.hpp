#pragma once
// CUDA start-up (the runtime, the driver's context on the run's first device)
// takes a noticeable time, once per process. Started on its own thread
// while the first image decodes, it is mostly paid by the time a CUDA
// variant first runs. Where the system will not start another thread, it
// runs on the calling thread instead.
#include <atomic>

#include "batch/thread_group.hpp"

namespace cudaconv {

class CudaWarmup {
public:
    CudaWarmup() = default;
    CudaWarmup(const CudaWarmup&) = delete;
    CudaWarmup& operator=(const CudaWarmup&) = delete;

    // Starts it in the background; without a device it only probes.
    void start();
    bool started() const { return started_; }
    // Whether probe_devices() has its answer, so that a call would not wait.
    bool probed() const { return probed_.load(std::memory_order_acquire); }

private:
    bool started_ = false;
    std::atomic<bool> probed_{false};
    ThreadGroup thread_;  // last: joined before the members it uses go
};

}  // namespace cudaconv
