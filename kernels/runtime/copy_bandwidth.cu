// The copy-bandwidth floor: what cudaMemcpy achieves device to device,
// timed as the variants are (CUDA events, warm-up, median).
#include "kernels/runtime/copy_bandwidth.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "kernels/runtime/cuda_backend.hpp"
#include "kernels/runtime/cuda_check.hpp"
#include "kernels/runtime/cuda_resources.hpp"

namespace cudaconv {

CopyBandwidth measure_copy_bandwidth(std::size_t bytes, int warmup, int repeat) {
    const DeviceInfo& device = current_device();
    CUDA_CHECK(cudaSetDevice(device.index));
    // Two buffers of an eighth each leave the device three quarters free.
    bytes = std::max<std::size_t>(1, std::min(bytes, device.global_memory_bytes / 8));
    repeat = std::max(1, repeat);

    const auto d_from = device_array<std::byte>(bytes);
    const auto d_to = device_array<std::byte>(bytes);
    const Stream stream;
    // Touch the source once, so the first copy pays for no page mapping.
    CUDA_CHECK(cudaMemsetAsync(d_from.get(), 0, bytes, stream.get()));

    const Event start, stop;
    std::vector<double> runs;
    for (int i = 0; i < warmup + repeat; ++i) {
        CUDA_CHECK(cudaEventRecord(start.get(), stream.get()));
        CUDA_CHECK(cudaMemcpyAsync(d_to.get(), d_from.get(), bytes, cudaMemcpyDeviceToDevice,
                                   stream.get()));
        CUDA_CHECK(cudaEventRecord(stop.get(), stream.get()));
        CUDA_CHECK(cudaEventSynchronize(stop.get()));
        float ms = 0.0f;
        CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
        if (i >= warmup) runs.push_back(ms);
    }
    std::sort(runs.begin(), runs.end());
    const std::size_t n = runs.size();
    CopyBandwidth result;
    result.bytes = bytes;
    result.median_ms = n % 2 ? runs[n / 2] : 0.5 * (runs[n / 2 - 1] + runs[n / 2]);
    if (result.median_ms > 0.0) {
        result.gb_per_s = 2.0 * static_cast<double>(bytes) / (result.median_ms * 1e-3) * 1e-9;
    }
    return result;
}

}  // namespace cudaconv
