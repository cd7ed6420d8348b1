#pragma once
// fast's register path: gray f32 images under a 3x3 filter, each warp a
// block of 32 16-byte vectors x R rows loaded straight into registers
// (kernels/fast/fast_registers.cu), and u8 images under a 3x3 filter of integer
// taps, each warp walking a band of such blocks through a ring of rows
// (kernels/fast/fast_registers_u8.cu). fast.cu asks registers_take() before the
// strip path.
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "kernels/runtime/device_job.hpp"

namespace cudaconv {

// Output rows a warp's block for a gray f32 image `width` x `height`
// under a 3x3 filter: 4 (measured fastest at every size timed).
// CUDACONV_FAST_REGISTERS=0 sends every job to the strip path
// (kernels/fast/fast_strips.cu) instead, =4 or =8 sets the height (for tests
// and sweeps), and either also sends RGBA u8 jobs of any size to the u8
// walk.
int registers_block_rows(std::int64_t width, std::int64_t height);

// Whether the register path runs this job (`taps` its filter's, row by
// row): a centred 3x3 filter, a border other than valid, a block height
// above, and either one f32 channel in (any output depth), or u8 in and
// out on 1, 3 or 4 channels, all filtered, with taps that are integers in
// [-128, 127] summed as they are (scale 1, delta 0) and a constant border
// value that is a u8 (DP4A, strips_dp4a_enabled()); RGBA u8 images only
// up to 24 MiB a frame (the size up to which the walk was measured faster;
// fast_registers.cu says why RGBA keeps it).
bool registers_take(const DeviceJob& job, const std::vector<double>& taps);

// The taps into the path's constant memory (u8: as DP4A words), on the
// job's stream; returns the rows that registers_launch takes: f32, the
// block height (registers_block_rows); u8, the walk's band height
// (registers_u8_band_rows).
int registers_prepare(const std::vector<double>& taps, const DeviceJob& job, cudaStream_t stream);
void registers_launch(const DeviceJob& job, int rows, cudaStream_t stream);

// The u8 walk (kernels/fast/fast_registers_u8.cu): a warp a band of 512 bytes x
// band_rows, in blocks of 4 rows. Its band height: 8 rows (2 blocks);
// CUDACONV_FAST_WALK=N sets N rounded up to a multiple of 4 (tests, sweeps).
int registers_u8_band_rows();
// Of an image `height` rows tall and `across` bands wide, the bottom rows
// that the tail walk takes, in bands of one block (4 rows) after the walk of
// whole bands above it, whose warps' places it takes as that walk ends: a
// share of a wave of resident warps, by the waves of the image's bands
// (all of them on images under 3/4 of a wave, half a wave from 1.5 waves,
// else none), rounded so that the walk above has whole bands.
// CUDACONV_FAST_WALK_TAIL=N asks for N rows instead (tests, sweeps; 0:
// none), rounded the same way.
std::int64_t registers_u8_tail_rows(std::int64_t height, std::int64_t across, int band_rows,
                                    std::int64_t resident_warps);
// The filter's 3 rows as DP4A words (strips_dp4a_words' group 0).
void registers_u8_prepare(const std::vector<std::int32_t>& dp4a_rows, cudaStream_t stream);
void registers_u8_launch(const DeviceJob& job, int band_rows, cudaStream_t stream);

}  // namespace cudaconv
