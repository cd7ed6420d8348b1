#include "kernels/runtime/chain_edges.hpp"

#include "kernels/device/device_common.cuh"
#include "kernels/runtime/cuda_backend.hpp"
#include "kernels/runtime/cuda_check.hpp"

namespace cudaconv {
namespace {

constexpr int kThreads = 512;

// The arguments stay in the kernel's parameter space (__grid_constant__)
// where the tile indexes them: the steps by step, the bands by tile.
template <typename In>
__global__ void __launch_bounds__(kThreads)
    chain_edges_kernel(const __grid_constant__ DeviceJob job,
                       const __grid_constant__ EdgeSteps steps,
                       const __grid_constant__ EdgeTiles tiles) {
    extern __shared__ float work[];
    // The taps in shared memory, which every thread reads at once.
    __shared__ float taps[kMaxEdgeTaps];
    for (int i = static_cast<int>(threadIdx.x); i < kMaxEdgeTaps; i += kThreads) {
        taps[i] = steps.taps[i];
    }
    __syncthreads();
    run_edge_tile<In>(job, steps, taps, edge_tile_at(tiles, static_cast<int>(blockIdx.x)), work,
                      static_cast<int>(threadIdx.x), kThreads);
}

}  // namespace

std::size_t chain_edges_work_limit(const DeviceInfo& device) {
    const std::size_t taps = sizeof(float) * kMaxEdgeTaps;
    return device.shared_memory_per_block_optin > taps ? device.shared_memory_per_block_optin - taps
                                                       : 0;
}

void launch_chain_edges(const DeviceJob& job, const ChainEdges& edges, cudaStream_t stream) {
    if (edges.tiles.count == 0) return;
    dispatch_input_depth(job.in_depth, [&](auto sample) {
        using In = decltype(sample);
        // Past 48 KB a kernel must opt in to its dynamic shared memory. The
        // limit is the kernel's on a device, so it is set once there to the
        // most any plan takes: a run on another thread never lowers it
        // between this one's setting and its launch.
        static PerDevice<bool> opted_in;
        opted_in.get([] {
            CUDA_CHECK(cudaFuncSetAttribute(
                chain_edges_kernel<In>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                static_cast<int>(chain_edges_work_limit(current_device()))));
            return true;
        });
        chain_edges_kernel<In><<<edges.tiles.count, kThreads, edges.work_bytes, stream>>>(
            job, edges.steps, edges.tiles);
    });
}

}  // namespace cudaconv
