#pragma once
// fast's strip path (kernels/fast_strips.cu): filters of 3x3, 5x5 and 7x7,
// one warp a band of rows, no block-wide barriers. fast.cu asks
// strips_take() first and runs its tile path on the jobs it refuses.
#include <cuda_runtime.h>

#include "kernels/device_job.hpp"

namespace cudaconv {

// Whether the strip path runs this job (square: 3, 5 or 7, centred; u8
// and f32 input of 1, 3 or 4 channels; a u8 input's constant border a
// whole u8). CUDACONV_FAST_STRIPS=0 turns it off, so that tests
// and benchmarks reach the tile path for the same jobs.
bool strips_take(const DeviceJob& job);
// The taps into the strip path's constant memory, on the job's stream.
void strips_prepare(const DeviceJob& job, cudaStream_t stream);
void strips_launch(const DeviceJob& job, cudaStream_t stream);

}  // namespace cudaconv
