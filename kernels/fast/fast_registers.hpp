#pragma once
// fast's register path: gray f32 images under a 3x3 filter, each warp a
// block of 32 16-byte vectors x R rows loaded straight into registers
// (kernels/fast/fast_registers.cu), and u8 images under a 3x3 filter of integer
// taps, each warp walking a band of such blocks through a ring of rows
// (kernels/fast/fast_registers_u8.cu): the named paths fast.registers and
// fast.walk-u8 (kernels/fast/fast_paths.cu).
#include <cuda_runtime.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/device_job.hpp"
#include "core/tuning.hpp"

namespace cudaconv {

// fast.registers, gray f32 under a 3x3 filter. Why it cannot run a job (a
// centred 3x3 filter, a border other than valid, one f32 channel in, any
// output depth, rows under 2^30 samples), or empty when it can.
std::string registers_f32_refusal(const DeviceJob& job);
// Output rows a warp's block: 4 (measured fastest at every size timed); the
// tuning parameter block_rows sets 4 or 8.
int registers_block_rows(std::int64_t width, std::int64_t height);
std::vector<TuningParam> registers_f32_tuning_params();
// The taps into the path's constant memory, on the job's stream (the caller
// holds ConstantTapsLock).
void registers_f32_prepare(const DeviceJob& job, cudaStream_t stream);
void registers_f32_launch(const DeviceJob& job, int block_rows, cudaStream_t stream);

// fast.walk-u8, u8 under a 3x3 filter of integer taps
// (kernels/fast/fast_registers_u8.cu). Why it cannot run a job (`taps` its
// filter's, row by row): a centred 3x3 filter, a border other than valid,
// u8 in and out on 1, 3 or 4 channels, all filtered, with taps that are
// integers in [-128, 127] summed as they are (scale 1, delta 0, DP4A) and a
// constant border value that is a u8; or empty when it can.
std::string walk_u8_refusal(const DeviceJob& job, const std::vector<double>& taps);
// Whether fast picks the walk for a job it can run: RGBA u8 images only up
// to 24 MiB a frame (the size up to which the walk was measured faster;
// fast_registers.cu says why RGBA keeps it), every other job it takes.
bool walk_u8_preferred(const DeviceJob& job);
// The walk's tuning parameters and the values a run takes from them.
std::vector<TuningParam> walk_u8_tuning_params();
struct WalkSettings {
    int band_rows = 8;                      // a warp's band: 2 blocks of 4 rows
    std::optional<std::int64_t> tail_rows;  // unset: registers_u8_tail_rows' rule
};
WalkSettings walk_settings(const Tuning& tuning);
// Of an image `height` rows tall and `across` bands wide, the bottom rows
// that the tail walk takes, in bands of one block (4 rows) after the walk of
// whole bands above it, whose warps' places it takes as that walk ends: a
// share of a wave of resident warps, by the waves of the image's bands
// (all of them on images under 3/4 of a wave, half a wave from 1.5 waves,
// else none), or `wanted` rows where set (0: none); rounded so that the
// walk above has whole bands.
std::int64_t registers_u8_tail_rows(std::int64_t height, std::int64_t across, int band_rows,
                                    std::int64_t resident_warps,
                                    std::optional<std::int64_t> wanted = std::nullopt);
// The filter's 3 rows as DP4A words (strips_dp4a_words' group 0) into the
// walk's constant memory (the caller holds ConstantTapsLock).
void registers_u8_prepare(const std::vector<double>& taps, cudaStream_t stream);
void registers_u8_launch(const DeviceJob& job, const WalkSettings& settings, cudaStream_t stream);

}  // namespace cudaconv
