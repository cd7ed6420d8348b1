#pragma once
// fast-separable's tensor-core path (kernels/separable_mma.cu): rank-1
// filters on u8 images as two banded matrix products on the tensor cores.
// fast_separable.cu asks mma_take() first and runs its CUDA-core path on the
// jobs it refuses.
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "core/job.hpp"
#include "kernels/device_job.hpp"

namespace cudaconv {

// The filter side from which the tensor-core path is the default: below it
// the CUDA-core path is as fast (docs/PERFORMANCE.md, 2026-11-25).
constexpr int kMmaFirstSide = 9;

// Whether the tensor-core path runs this job: a rank-1 filter, square, odd,
// centred, of side up to 33; u8 input (its samples are exact in fp16) of 1
// to 4 channels; every border but valid, a constant border's value a whole
// u8. CUDACONV_FAST_SEPARABLE_MMA=0 turns the path off and =1 takes every
// such job whatever its side, so that tests and benchmarks reach both paths;
// otherwise it takes sides from kMmaFirstSide on.
bool mma_take(const Job& job, const DeviceJob& device_job);

// What a run of the tensor-core path prepares once: the taps as the tensor
// cores' operand fragments (built here, copied to the device on the job's
// stream; the host copy is kept until clear(), as the copy is
// asynchronous) and the launch's shape.
class MmaPath {
public:
    void prepare(const Job& job, const DeviceJob& device_job, cudaStream_t stream);
    void launch(const DeviceJob& job, cudaStream_t stream) const;
    void clear() { fragments_.clear(); }

private:
    std::vector<std::uint32_t> fragments_;
    float unscale_ = 1.0f;  // undoes the taps' power-of-two scaling
    int blocks_k_ = 3;      // 16-tap blocks a pass multiplies: 2 up to side 17, else 3
    int grid_ = 1;
    std::size_t shared_bytes_ = 0;
};

}  // namespace cudaconv
