#pragma once
// The device's copy bandwidth, measured: the floor every memory-bound
// variant is compared with (`cudaconv bench` reports each result's share).
#include <cstddef>

namespace cudaconv {

struct CopyBandwidth {
    std::size_t bytes = 0;   // size of the buffer copied
    double median_ms = 0.0;  // one device-to-device cudaMemcpy of it
    double gb_per_s = 0.0;   // bytes read plus bytes written, per second (1e9)
};

// 512 MiB: ten times the H100's 50 MB L2, so the copy streams from HBM.
constexpr std::size_t kCopyBandwidthBytes = std::size_t{512} << 20;

// Times a device-to-device copy of `bytes` (at most an eighth of the first
// device's memory) with CUDA events: `warmup` untimed, then the median of
// `repeat`. Throws CudaError when there is no device or a call fails.
CopyBandwidth measure_copy_bandwidth(std::size_t bytes = kCopyBandwidthBytes, int warmup = 2,
                                     int repeat = 10);

}  // namespace cudaconv
