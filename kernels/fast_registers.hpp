#pragma once
// fast's register path (kernels/fast_registers.cu): gray f32 images under
// a 3x3 filter, each warp a block of 32 vectors x R rows loaded straight
// into registers. fast.cu asks registers_take() before the strip path.
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/device_job.hpp"

namespace cudaconv {

// Output rows a warp's block for a gray f32 image `width` x `height` under
// a 3x3 filter: 4 (measured fastest at every size timed).
// CUDACONV_FAST_REGISTERS=0 sends every job to the strip path
// (kernels/fast_strips.cu) instead, =4 or =8 sets the height (for tests
// and sweeps).
int registers_block_rows(std::int64_t width, std::int64_t height);

// Whether the register path runs this job: one f32 channel in, a centred
// 3x3 filter, a border other than valid, and a block height above.
bool registers_take(const DeviceJob& job);

// The taps into the path's constant memory, on the job's stream; returns
// the block height (registers_block_rows) that registers_launch takes.
int registers_prepare(const DeviceJob& job, cudaStream_t stream);
void registers_launch(const DeviceJob& job, int block_rows, cudaStream_t stream);

}  // namespace cudaconv
