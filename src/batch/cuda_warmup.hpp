#pragma once
// CUDA start-up (the runtime, the driver's context on the first device)
// takes a noticeable time, once per process. Started on its own thread
// while the first image decodes, it is mostly paid by the time a CUDA
// variant first runs.
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

private:
    std::thread thread_;
};

}  // namespace cudaconv
