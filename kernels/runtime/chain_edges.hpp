#pragma once
// The launch of a banded chain's steps near the edges (core/chain_edges.hpp):
// one block a tile, its work in shared memory.
#include <cuda_runtime.h>

#include <cstddef>

#include "core/chain_edges.hpp"
#include "core/device_job.hpp"
#include "kernels/runtime/device_info.hpp"

namespace cudaconv {

// The most shared memory a tile's work may take on `device` (chain_edges'
// max_work_bytes): a block's opt-in less the kernel's own copy of the taps.
std::size_t chain_edges_work_limit(const DeviceInfo& device);

// Writes the bands of `job`'s output (src, dst and pitches on the device;
// its border, depths, channels and finish those of the chain's one filter)
// on `stream`.
void launch_chain_edges(const DeviceJob& job, const ChainEdges& edges, cudaStream_t stream);

}  // namespace cudaconv
