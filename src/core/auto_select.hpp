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

// Fastest first. A CUDA variant is considered only when a device is
// present; cpu-ref, the slowest, is the last resort and can run anything.
// Names not (yet) registered are skipped, so the order can list variants
// ahead of their arrival.
constexpr std::array<std::string_view, 12> kAutoPreference{
    "fast", "fast-separable", "separable", "unrolled", "smem-cached", "smem", "cmem", "naive", "fft", "cudnn",
    "cpu", "cpu-ref"};

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
