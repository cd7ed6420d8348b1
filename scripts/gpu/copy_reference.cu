// What a plain device copy of a target job's bytes takes, timed as
// `cudaconv bench` times its CUDA rows (--timing device: each copy queued
// behind a held stream, kernels/stream_hold.hpp; sources rotated over more
// than the L2). The copy-bandwidth share `cudaconv bench` prints comes from
// a 512 MiB copy; a 36 or 48 MB copy cannot reach that rate (its start and
// end are a larger part of it), and this is the floor issue 5's targets
// sit against: RGB u8 4000x3000 (36 MB in, 36 out) and gray f32 4000x3000
// (48 MB in, 48 out). Built and run on the GPU machine by
// scripts/gpu/targets.sh:
//   nvcc -O3 -std=c++17 -arch=sm_90 -I. scripts/gpu/copy_reference.cu kernels/stream_hold.cu
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "kernels/stream_hold.hpp"
#include "scripts/gpu/standalone_cuda_error.hpp"

namespace {

void check(cudaError_t status, const char* what) {
    if (status != cudaSuccess) cudaconv::throw_cuda_error(status, what, __FILE__, __LINE__);
}

// The simplest streaming copy: 16-byte loads and stores, a grid-stride loop.
__global__ void copy_vectors(const uint4* __restrict__ from, uint4* __restrict__ to,
                             std::size_t n) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
         i += stride) {
        to[i] = from[i];
    }
}

struct Result {
    double median_us = 0;
    double min_us = 0;
};

// Median and least of `repeat` held copies, after `warmup`, each from the
// next of the sources (and to the next destination).
template <typename Copy>
Result time_copies(cudaconv::StreamHold& hold, cudaStream_t stream, Copy copy, int buffers) {
    constexpr int kWarmup = 4;
    constexpr int kRepeat = 40;
    cudaEvent_t start, stop;
    check(cudaEventCreate(&start), "cudaEventCreate");
    check(cudaEventCreate(&stop), "cudaEventCreate");
    // The first copy unheld: it may load a kernel, which waits on the
    // device (`cudaconv bench` never holds a run's first launch either).
    copy(0);
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    std::vector<double> us;
    for (int i = 0; i < kWarmup + kRepeat; ++i) {
        hold.hold(stream);
        check(cudaEventRecord(start, stream), "cudaEventRecord");
        copy(i % buffers);
        check(cudaEventRecord(stop, stream), "cudaEventRecord");
        hold.release();
        check(cudaEventSynchronize(stop), "cudaEventSynchronize");
        if (hold.timed_out()) {
            std::printf("the copy waited on the device while the stream was held: no device time\n");
            std::exit(1);
        }
        float ms = 0;
        check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
        if (i >= kWarmup) us.push_back(1000.0 * ms);
    }
    std::sort(us.begin(), us.end());
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return {us[us.size() / 2], us.front()};
}

}  // namespace

int main() {
    struct Job {
        const char* name;
        std::size_t bytes;
    };
    const Job jobs[] = {{"RGB u8 4000x3000", 36000000}, {"gray f32 4000x3000", 48000000}};
    cudaDeviceProp device{};
    check(cudaGetDeviceProperties(&device, 0), "cudaGetDeviceProperties");
    cudaStream_t stream;
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    cudaconv::StreamHold hold;
    for (const Job& job : jobs) {
        // Sources and destinations over at least 4 times the L2, as the
        // bench rotates its inputs.
        const int buffers = static_cast<int>(
            std::max<std::size_t>(2, 4 * static_cast<std::size_t>(device.l2CacheSize) / job.bytes + 1));
        std::vector<void*> from(buffers), to(buffers);
        for (int b = 0; b < buffers; ++b) {
            check(cudaMalloc(&from[b], job.bytes), "cudaMalloc");
            check(cudaMalloc(&to[b], job.bytes), "cudaMalloc");
            check(cudaMemset(from[b], 1, job.bytes), "cudaMemset");
            check(cudaMemset(to[b], 0, job.bytes), "cudaMemset");
        }
        const Result memcpy_result = time_copies(
            hold, stream,
            [&](int b) {
                check(cudaMemcpyAsync(to[b], from[b], job.bytes, cudaMemcpyDeviceToDevice, stream),
                      "cudaMemcpyAsync");
            },
            buffers);
        const Result kernel_result = time_copies(
            hold, stream,
            [&](int b) {
                copy_vectors<<<device.multiProcessorCount * 16, 256, 0, stream>>>(
                    static_cast<const uint4*>(from[b]), static_cast<uint4*>(to[b]), job.bytes / 16);
                check(cudaGetLastError(), "copy_vectors");
            },
            buffers);
        const double mb = static_cast<double>(job.bytes) / 1e6;
        std::printf("copy of %s (%.0f MB in, %.0f out): cudaMemcpy %.1f us (least %.1f), "
                    "16-byte copy kernel %.1f us (least %.1f), %.0f GB/s\n",
                    job.name, mb, mb, memcpy_result.median_us, memcpy_result.min_us,
                    kernel_result.median_us, kernel_result.min_us,
                    2.0 * static_cast<double>(job.bytes) / (kernel_result.median_us * 1e3));
        for (int b = 0; b < buffers; ++b) {
            cudaFree(from[b]);
            cudaFree(to[b]);
        }
    }
    cudaStreamDestroy(stream);
    return 0;
}
