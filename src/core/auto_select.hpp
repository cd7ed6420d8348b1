#pragma once
// `-k auto`: which variant runs a job. One pure function of the job, the
// candidates and whether a CUDA device is present, so it can be tested
// without a GPU; its preferences are named constants side by side.
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "core/backend.hpp"

namespace cudaconv {

// Fastest first, as measured on an H100 (docs/PERFORMANCE.md, 2026-11-23,
// 4000x3000 images): fast for odd square filters up to 15x15, the
// rank-1 variants next, then the tutorial ladder in its measured order
// (smem ahead of smem-cached: 961 against 7190 us on 15x15 f32). A CUDA
// variant is considered only when a device is present; cpu-ref, the
// slowest, is the last resort and can run anything. Names not (yet)
// registered are skipped. auto_preference() reorders this for a job.
constexpr std::array<std::string_view, 12> kAutoPreference{
    "fast", "fast-separable", "separable", "unrolled", "smem", "smem-cached", "cmem", "naive",
    "fft", "cudnn", "cpu", "cpu-ref"};

// kAutoPreference, reordered where the measurements say so for this job:
//  - a rank-1 filter on f32 input: fast-separable first (4000x3000 gray:
//    68, 73 and 86 us for 3x3, 7x7 and 15x15 Gaussians against fast's 76,
//    140 and 455); on u8 input fast stays ahead (76 against 144 us, 3x3);
//  - a filter that is not rank 1 and larger than 15 on a side (beyond fast
//    and unrolled): fft right after them (31x31: 557 us against smem's
//    3215, cudnn's 5372 and smem-cached's 30274).
std::vector<std::string_view> auto_preference(const Job& job);

struct DeviceContext {
    bool has_cuda_device = false;
    std::string no_device_reason;  // why not, when has_cuda_device is false
};

struct AutoChoice {
    Backend* backend = nullptr;  // nullptr when nothing can run the job
    std::string reason;          // for the log line, and the error when none can
};

AutoChoice choose_variant(const Job& job, const std::vector<Backend*>& candidates,
                          const DeviceContext& device);

}  // namespace cudaconv
