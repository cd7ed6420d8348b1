// naive: one thread per output pixel, image and filter in global memory.
// The first rung of the ladder (first-principles blog, lecture): every tap
// reads the input straight from global memory through the border policy
// (direct_sum, kernels/device/device_common.cuh).
#include <cuda_runtime.h>

#include "kernels/runtime/cuda_backend.hpp"
#include "kernels/runtime/cuda_check.hpp"
#include "kernels/runtime/cuda_registry.hpp"
#include "kernels/device/device_common.cuh"

namespace cudaconv {
namespace {

// 16x16 threads: a square block keeps both the row and the column reuse in
// the L1/L2 caches, which is all this variant has.
constexpr int kBlockX = 16;
constexpr int kBlockY = 16;

template <typename In>
__global__ void naive_kernel(DeviceJob job) {
    const std::int64_t x = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const std::int64_t y = static_cast<std::int64_t>(blockIdx.y) * blockDim.y + threadIdx.y;
    if (x >= job.dst_width || y >= job.dst_height) return;
    for (int c = 0; c < job.filtered_channels; ++c) {
        store_result(job, x, y, c, direct_sum<In>(job, x, y, c));
    }
    copy_unfiltered<In>(job, x, y);
}

class NaiveBackend final : public CudaBackend {
public:
    std::string_view name() const override { return "naive"; }
    std::optional<int> auto_rank(const Job&) const override { return kRankNaive; }
    std::string_view summary() const override {
        return "one thread per output, image and filter in global memory";
    }

protected:
    Support check_job(const Job& job, const DeviceInfo&) const override {
        // Grid y is limited to 65535 blocks.
        if (job.dst.height > 65535LL * kBlockY) return Support::no("image taller than 1048560");
        return Support::yes();
    }

    std::unique_ptr<LaunchPlan> plan(const Job&, const DeviceJob&, const Tuning&,
                                     cudaStream_t) const override {
        return launch_only([](const DeviceJob& job, cudaStream_t stream) {
            const dim3 block(kBlockX, kBlockY);
            const dim3 grid(blocks_for(job.dst_width, kBlockX),
                            blocks_for(job.dst_height, kBlockY));
            dispatch_input_depth(job.in_depth, [&](auto sample) {
                naive_kernel<decltype(sample)><<<grid, block, 0, stream>>>(job);
            });
        });
    }
};

}  // namespace

std::unique_ptr<Backend> make_naive_backend() { return std::make_unique<NaiveBackend>(); }

}  // namespace cudaconv
