#pragma once
// fast's tile path (kernels/fast/fast.cu): odd square filters 3x3 to 15x15 on u8
// and f32 images, bulk-copied tiles that the resident blocks take as they
// free up. The named path fast.tiles (kernels/fast/fast_paths.cu).
#include <cuda_runtime.h>

#include <memory>
#include <string>
#include <vector>

#include "core/device_job.hpp"
#include "core/job.hpp"
#include "core/tuning.hpp"
#include "kernels/runtime/cuda_backend.hpp"

namespace cudaconv {

// Why the tile path cannot run this job, or empty when it can.
std::string tiles_refusal(const Job& job);
// The tuning parameter max_blocks caps the grid, so that tests of small
// images see blocks walk several tiles, as they do on large ones.
std::vector<TuningParam> tiles_tuning_params();
// A run of the tile path: the taps into constant memory (holding
// ConstantTapsLock until the run ends) and the tile counter, zeroed.
std::unique_ptr<LaunchPlan> tiles_plan(const DeviceJob& job, int max_blocks, cudaStream_t stream);

}  // namespace cudaconv
