// What a plain device copy of a target job's bytes takes, timed as
// `cudaconv bench` times its CUDA rows (--timing device: each copy queued
// behind a held stream, kernels/runtime/stream_hold.hpp; sources rotated over more
// than the L2). The copy-bandwidth share `cudaconv bench` prints comes from
// a 512 MiB copy; a 36 or 48 MB copy cannot reach that rate (its start and
// end are a larger part of it), and this is the floor issue 5's targets
// sit against: RGB u8 4000x3000 (36 MB in, 36 out) and gray f32 4000x3000
// (48 MB in, 48 out). Built and run on the GPU machine by
// scripts/gpu/targets.sh:
//   nvcc -O3 -std=c++17 -arch=sm_90 -I. scripts/gpu/copy_reference.cu kernels/runtime/stream_hold.cu
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "kernels/runtime/stream_hold.hpp"
#include "scripts/gpu/copy_vectors.cuh"
#include "scripts/gpu/held_timing.hpp"

namespace {

using cudaconv::check_cuda;
using cudaconv::copy_vectors;

}  // namespace

int main() {
    struct Job {
        const char* name;
        std::size_t bytes;
    };
    const Job jobs[] = {{"RGB u8 4000x3000", 36000000}, {"gray f32 4000x3000", 48000000}};
    cudaDeviceProp device{};
    check_cuda(cudaGetDeviceProperties(&device, 0), "cudaGetDeviceProperties");
    cudaStream_t stream;
    check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    cudaconv::StreamHold hold;
    for (const Job& job : jobs) {
        // Sources and destinations over at least 4 times the L2, as the
        // bench rotates its inputs.
        const int buffers = static_cast<int>(std::max<std::size_t>(
            2, 4 * static_cast<std::size_t>(device.l2CacheSize) / job.bytes + 1));
        std::vector<void*> from(buffers), to(buffers);
        for (int b = 0; b < buffers; ++b) {
            check_cuda(cudaMalloc(&from[b], job.bytes), "cudaMalloc");
            check_cuda(cudaMalloc(&to[b], job.bytes), "cudaMalloc");
            check_cuda(cudaMemset(from[b], 1, job.bytes), "cudaMemset");
            check_cuda(cudaMemset(to[b], 0, job.bytes), "cudaMemset");
        }
        const cudaconv::HeldTimes memcpy_result = cudaconv::time_held(
            hold, stream,
            [&](int b) {
                check_cuda(
                    cudaMemcpyAsync(to[b], from[b], job.bytes, cudaMemcpyDeviceToDevice, stream),
                    "cudaMemcpyAsync");
            },
            buffers);
        const cudaconv::HeldTimes kernel_result = cudaconv::time_held(
            hold, stream,
            [&](int b) {
                copy_vectors<<<device.multiProcessorCount * 16, 256, 0, stream>>>(
                    static_cast<const uint4*>(from[b]), static_cast<uint4*>(to[b]), job.bytes / 16);
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
