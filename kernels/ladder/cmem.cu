// cmem: naive's one thread per output, with the filter taps in __constant__
// memory (lecture, Hofmann, conv test repo). Every thread of a warp reads
// the same tap at the same time, which the constant cache broadcasts in one
// transaction; the image is still read straight from global memory.
#include <cuda_runtime.h>

#include <fmt/format.h>

#include "kernels/runtime/cuda_backend.hpp"
#include "kernels/runtime/cuda_check.hpp"
#include "kernels/runtime/cuda_registry.hpp"
#include "kernels/device/device_common.cuh"

namespace cudaconv {
namespace {

// 16384 floats = 64 KB, all the __constant__ memory a module may declare:
// filters up to 128x128 taps (or any shape with as many).
constexpr int kMaxConstantTaps = 16384;

// 16x16 threads, as naive: a square block keeps the row and the column
// reuse of the image in the L1/L2 caches.
constexpr int kBlockX = 16;
constexpr int kBlockY = 16;

// One copy a device, like any __constant__ symbol (each device loads its
// own module): plan() fills it before each run's launches, and runs
// on one device take turns on it (ConstantTapsLock).
__constant__ float c_taps[kMaxConstantTaps];

template <typename In>
__global__ void cmem_kernel(DeviceJob job) {
    const std::int64_t x = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const std::int64_t y = static_cast<std::int64_t>(blockIdx.y) * blockDim.y + threadIdx.y;
    if (x >= job.dst_width || y >= job.dst_height) return;
    for (int c = 0; c < job.filtered_channels; ++c) {
        float sum = 0.0f;
        for (int j = 0; j < job.filter_height; ++j) {
            for (int i = 0; i < job.filter_width; ++i) {
                sum += c_taps[j * job.filter_width + i] *
                       load_bordered<In>(job, x + job.origin_x + i, y + job.origin_y + j, c);
            }
        }
        store_result(job, x, y, c, sum);
    }
    copy_unfiltered<In>(job, x, y);
}

class CmemBackend final : public CudaBackend {
public:
    std::string_view name() const override { return "cmem"; }
    std::optional<int> auto_rank(const Job&) const override { return kRankCmem; }
    std::string_view summary() const override {
        return "one thread per output, filter taps in __constant__ memory";
    }

protected:
    Support check_job(const Job& job, const DeviceInfo&) const override {
        const std::size_t taps = job.params.filter.taps.size();
        if (taps > static_cast<std::size_t>(kMaxConstantTaps)) {
            return Support::no(fmt::format(
                "the {}x{} filter has {} taps; constant memory (64 KB) holds at most {} (128x128)",
                job.params.filter.width, job.params.filter.height, taps, kMaxConstantTaps));
        }
        // Grid y is limited to 65535 blocks.
        if (job.dst.height > 65535LL * kBlockY) {
            return Support::no(fmt::format("image taller than {}", 65535LL * kBlockY));
        }
        return Support::yes();
    }

    std::unique_ptr<LaunchPlan> plan(const Job&, const DeviceJob& device_job, const Tuning&,
                                     cudaStream_t stream) const override {
        return plan_with_constant_taps(stream, [&] {
            copy_taps_to_constant(c_taps, device_job, stream);
            return [](const DeviceJob& job, cudaStream_t stream) {
                // `valid` with a filter larger than the image leaves nothing
                // to do (and a zero-sized grid is a launch error).
                if (job.dst_width <= 0 || job.dst_height <= 0) return;
                const dim3 block(kBlockX, kBlockY);
                const dim3 grid(blocks_for(job.dst_width, kBlockX),
                                blocks_for(job.dst_height, kBlockY));
                dispatch_input_depth(job.in_depth, [&](auto sample) {
                    cmem_kernel<decltype(sample)><<<grid, block, 0, stream>>>(job);
                });
            };
        });
    }
};

}  // namespace

std::unique_ptr<Backend> make_cmem_backend() { return std::make_unique<CmemBackend>(); }

}  // namespace cudaconv
