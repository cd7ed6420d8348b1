#pragma once
// Timing launches as `cudaconv bench --timing device` times them, for the
// standalone programs built on the GPU machine (copy_reference.cu):
// each launch queued behind a held stream
// (kernels/runtime/stream_hold.hpp) with events around it, after a warm-up, each
// on the next of `buffers` sources so that they rotate past the L2.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "kernels/runtime/stream_hold.hpp"
#include "scripts/gpu/standalone_cuda_error.hpp"

namespace cudaconv {

inline void check_cuda(cudaError_t status, const char* what) {
    if (status != cudaSuccess) throw_cuda_error(status, what, __FILE__, __LINE__);
}

struct HeldTimes {
    double median_us = 0;
    double min_us = 0;
};

// Median and least of 40 held launches, after 4; launch(i) launches on
// `stream` with buffer i.
template <typename Launch>
HeldTimes time_held(StreamHold& hold, cudaStream_t stream, Launch launch, int buffers) {
    constexpr int kWarmup = 4;
    constexpr int kRepeat = 40;
    cudaEvent_t start, stop;
    check_cuda(cudaEventCreate(&start), "cudaEventCreate");
    check_cuda(cudaEventCreate(&stop), "cudaEventCreate");
    // The first launch unheld: it may load a kernel, which waits on the
    // device (`cudaconv bench` never holds a run's first launch either).
    launch(0);
    check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    std::vector<double> us;
    for (int i = 0; i < kWarmup + kRepeat; ++i) {
        hold.hold(stream);
        check_cuda(cudaEventRecord(start, stream), "cudaEventRecord");
        launch(i % buffers);
        check_cuda(cudaGetLastError(), "launch");
        check_cuda(cudaEventRecord(stop, stream), "cudaEventRecord");
        hold.release();
        check_cuda(cudaEventSynchronize(stop), "cudaEventSynchronize");
        if (hold.timed_out()) {
            std::printf(
                "a launch waited on the device while the stream was held: no device time\n");
            std::exit(1);
        }
        float ms = 0;
        check_cuda(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
        if (i >= kWarmup) us.push_back(1000.0 * ms);
    }
    std::sort(us.begin(), us.end());
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return {us[us.size() / 2], us.front()};
}

}  // namespace cudaconv
