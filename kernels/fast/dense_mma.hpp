#pragma once
// fast's tensor-core path (kernels/fast/dense_mma.cu): any filter up to 33x33,
// dense or not, as banded matrix products on the tensor cores in three
// TF32 products (3xTF32), which keep float32's precision. fast.cu routes a
// job here when the path is measured faster than its own CUDA-core paths,
// or when those cannot run it (sides past 15, even or non-square sizes, an
// anchor off centre, `valid`, u16 input).
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "core/device_job.hpp"
#include "core/job.hpp"
#include "core/tuning.hpp"

namespace cudaconv {

constexpr int kDenseMmaLargestSide = 33;

// Why the tensor-core path cannot run this job, or empty when it can: a
// filter of up to kDenseMmaLargestSide each way; 1 to 4 channels of u8,
// u16 or f32; taps and a constant border's value finite and under 2^126 in
// magnitude (their TF32 parts must not overflow).
std::string dense_mma_refusal(const Job& job);

// Whether fast picks the tensor-core path for a job it can run: the
// measured crossover (dense_mma.cu) decides, and a job none of fast's
// other paths can run always goes there (`other_paths_can_run` false).
bool dense_mma_preferred(const Job& job, bool other_paths_can_run);
// The tuning parameter max_blocks caps the grid (each block then walks
// more of the items), for tests of small images.
std::vector<TuningParam> dense_mma_tuning_params();
// Colour u8 images from this many pixels take the tensor-core path at
// 15x15 (dense_mma.cu). Measured: the tile path wins at 2 megapixels and
// below (but for 1000x1000), this path at 6 and 12; between 2 and 6 the
// line is drawn, not measured.
constexpr long long kDenseMmaColourPixels = 4000000;

// The host arithmetic of the path, exposed for its tests (no device needed).
//
// 16-row by 8-column blocks of output are sums of mma.m16n8k8 products
// A x T: A is 16 staged rows by 8 staged columns, and T (8 x 8) holds
// filter row i's taps f[i][8 d + k - n] (k the A column, n the output
// column, d the column block's offset, zero past the filter). Lane (g, t)
// (g = lane / 4, t = lane % 4) holds T at k = t and t + 4 of column n = g:
// taps u = 8 d + t - g and u + 4. So entry e of a table row, for tap
// u = e - kDenseTapPad, is the 4 floats the lane loads at once: hi(u),
// hi(u + 4), lo(u), lo(u + 4), the TF32 parts of the taps (zeros past the
// filter). A row has entries for u = -kDenseTapPad ... 8 D - 5.
constexpr int kDenseTapPad = 8;
// Column blocks of 8 an output block's taps span: 8 outputs and w - 1
// more columns, wherever within a block the first lies.
constexpr int dense_mma_blocks(int width) { return (width + 6) / 8 + 1; }
constexpr int dense_mma_tap_stride(int blocks) { return 8 * blocks + kDenseTapPad - 4; }
// v rounded to TF32 (10 mantissa bits), to nearest with ties away from
// zero, as cvt.rna.tf32.f32 does; v finite and under 2^127 in magnitude.
float tf32_round(float v);
// The tap table: filter_height rows of dense_mma_tap_stride(blocks)
// entries of 4 floats; tap f = float(taps[i]) has hi = tf32_round(f),
// lo = tf32_round(f - hi).
std::vector<float> dense_mma_tap_table(const std::vector<double>& taps, int width, int height);

// What a run of the tensor-core path prepares once: the tap table on the
// device (copied on the job's stream; the host copy is kept with the
// object, as the copy is asynchronous; the caller holds
// ConstantTapsLock) and the launch's shape, its grid at most
// `max_blocks` (0: no cap).
class DenseMmaPath {
public:
    DenseMmaPath(const Job& job, const DeviceJob& device_job, int max_blocks, cudaStream_t stream);
    void launch(const DeviceJob& job, cudaStream_t stream) const;

private:
    std::vector<float> table_;
    int blocks_ = 1;  // column blocks: dense_mma_blocks(filter width)
    int grid_ = 1;
    std::size_t shared_bytes_ = 0;
};

}  // namespace cudaconv
