#pragma once
// fast-separable's choice of path for a job, for the variants that run a
// rank-1 filter with its kernels: fast-separable itself, and `fast`, which
// takes the rank-1 jobs where they are measured faster than its dense
// paths (kernels/fast/fast_paths.cu).
#include <cuda_runtime.h>

#include <memory>
#include <vector>

#include "core/backend.hpp"
#include "core/device_job.hpp"
#include "core/job.hpp"
#include "core/tuning.hpp"
#include "kernels/runtime/cuda_backend.hpp"
#include "kernels/runtime/device_info.hpp"

namespace cudaconv {

// Whether one of its paths runs `job` on `device`, or why neither does.
Support fast_separable_support(const Job& job, const DeviceInfo& device);

// A run of `job` on the path it takes: the tensor cores where they take
// the job, else the strips in one kernel. The plan holds the __constant__
// taps' lock (ConstantTapsLock) until it is destroyed.
std::unique_ptr<LaunchPlan> fast_separable_plan(const Job& job, const DeviceJob& dj,
                                                const Tuning& tuning, cudaStream_t stream);

// Both paths' tuning parameters.
std::vector<TuningParam> fast_separable_tuning_params();

}  // namespace cudaconv
