#pragma once
// fast-separable's tensor-core path (kernels/fast_separable/separable_mma.cu): rank-1
// filters on u8 images as two banded matrix products on the tensor cores.
// fast_separable.cu asks mma_take() first and runs its CUDA-core path on the
// jobs it refuses.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/device_job.hpp"
#include "core/hd.hpp"
#include "core/job.hpp"
#include "filters/rank1.hpp"

namespace cudaconv {

// Whether the tensor-core path runs this job: a rank-1 filter, square, odd,
// centred, of side up to 33; u8 input (its samples are exact in fp16) of 1
// to 4 channels; every border but valid, a constant border's value a whole
// u8. It is faster than the CUDA-core path on every such job measured
// (4000x3000 Gaussians 3 to 31 on an H100: RGB 73.5-88 us, where the
// CUDA-core path takes 528-672), so fast-separable picks it for them all.
bool mma_take(const Job& job, const DeviceJob& device_job);

// Shared memory a block of the tensor-core path takes for this job: up to
// 95 KB (4 filtered channels, sides over 17, u8 output), more than some
// GPUs give a block; fast-separable then keeps the job on its CUDA cores.
std::size_t mma_shared_bytes(const DeviceJob& device_job);

// The host arithmetic of the path, exposed for its tests (no device needed).
//
// Powers of two that scale the taps: the column taps (the first pass) so
// that the intermediate, at most 255 * sum|column| * 2^column_exp, stays
// within 2^15 (fp16 ends at 65504); the row taps so that their largest lies
// in [2^10, 2^11), where their lo parts stay normal fp16.
struct MmaTapScales {
    int row_exp = 0;
    int column_exp = 0;
};
MmaTapScales mma_tap_scales(const Rank1Filter& factors);

// 16-sample blocks each pass multiplies: 2 for sides up to 17, 3 up to 33.
CC_HD constexpr int mma_blocks_k(int side) { return side <= 17 ? 2 : 3; }
// The first intermediate tile (8 staged columns each; the columns are
// staged from 16 pixels left of the output tile) that a step of the row
// pass reads: 1 for 2 blocks (radius at most 8), 0 for 3.
CC_HD constexpr int mma_first_tile(int blocks_k) { return blocks_k == 2 ? 1 : 0; }
// T[m][k] = row[16 j + k - m + mma_row_shift(side)]: from output pixel m,
// the tap that staged column 8 mma_first_tile + 16 j + k meets.
CC_HD constexpr int mma_row_shift(int side) {
    return side / 2 - 16 + 8 * mma_first_tile(mma_blocks_k(side));
}

// Where a lane's fragment words lie in mma_fragments(): word w of lane l at
// w * 32 + l. Each pass's band matrix is an A operand: k-block j < 3, hi/lo
// part, register reg < 4; the column pass's (G) first, then the row pass's
// (T).
constexpr int kMmaPassWords = 3 * 2 * 4;
CC_HD constexpr int mma_column_word(int j, int part, int reg) { return (j * 2 + part) * 4 + reg; }
CC_HD constexpr int mma_row_word(int j, int part, int reg) {
    return kMmaPassWords + mma_column_word(j, part, reg);
}
// Every lane's fragments of G (G[m][k] = column[16 j + k - m]) and T
// (T[m][k] = row[16 j + k - m + mma_row_shift(side)]), the taps scaled by
// `scales` and split into hi and lo fp16 parts, in the mma.m16n8k16 A
// layout of the PTX ISA.
std::vector<std::uint32_t> mma_fragments(const Rank1Filter& factors, const MmaTapScales& scales);

// What a run of the tensor-core path prepares once: the taps as the tensor
// cores' operand fragments (built here, copied to the device on the job's
// stream; the host copy is kept with the object, as the copy is
// asynchronous; the caller holds ConstantTapsLock) and the launch's
// shape, its grid at most `max_blocks` (0: a block a tile; fewer make each
// block walk many tiles, for the tests).
class MmaPath {
public:
    MmaPath(const Job& job, const DeviceJob& device_job, int max_blocks, cudaStream_t stream);
    void launch(const DeviceJob& job, cudaStream_t stream) const;

private:
    std::vector<std::uint32_t> fragments_;
    float unscale_ = 1.0f;  // undoes the taps' power-of-two scaling
    int blocks_k_ = 3;      // 16-tap blocks a pass multiplies: 2 up to side 17, else 3
    int grid_ = 1;
    std::size_t shared_bytes_ = 0;
};

}  // namespace cudaconv
