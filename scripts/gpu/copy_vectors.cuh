#pragma once
// The plain copy that issue 5's targets are set against, for the
// standalone programs built on the GPU machine (copy_reference.cu):
// 16-byte loads and stores, a grid-stride loop.
#include <cuda_runtime.h>

#include <cstddef>

namespace cudaconv {

__global__ void copy_vectors(const uint4* __restrict__ from, uint4* __restrict__ to,
                             std::size_t n) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
         i += stride) {
        to[i] = from[i];
    }
}

}  // namespace cudaconv
