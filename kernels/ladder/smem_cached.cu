// smem-cached: each block keeps only its own tile of the input in shared
// memory, one sample per thread, and reads the halo straight from global
// memory, counting on the L1/L2 caches, which hold it for the neighbouring
// blocks anyway (lecture, "alternative tiled"). No halo loading code, no
// idle loader threads; the price is a branch per tap.
#include <cuda_runtime.h>

#include <fmt/format.h>

#include "kernels/runtime/cuda_backend.hpp"
#include "kernels/runtime/cuda_check.hpp"
#include "kernels/runtime/cuda_registry.hpp"
#include "kernels/device/device_common.cuh"

namespace cudaconv {
namespace {

// 32 columns: a warp is one tile row, so its shared reads are conflict-free,
// its global halo reads coalesce, and the row test below is warp-uniform.
constexpr int kTileW = 32;
// 8 rows: 256 threads, a common block size; the tile is tiny either way.
constexpr int kTileH = 8;
constexpr int kThreads = kTileW * kTileH;
// Interleaved images have at most 4 channels (RGBA).
constexpr int kMaxChannels = 4;
// The grid's x limit, 2^31 - 1 blocks.
constexpr std::int64_t kMaxGridX = 2147483647;

std::int64_t tile_count(std::int64_t width, std::int64_t height) {
    return ((width + kTileW - 1) / kTileW) * ((height + kTileH - 1) / kTileH);
}

template <typename In>
__global__ void __launch_bounds__(kThreads) smem_cached_kernel(DeviceJob job) {
    __shared__ float s_tile[kMaxChannels][kTileH][kTileW];
    const int tx = static_cast<int>(threadIdx.x);
    const int ty = static_cast<int>(threadIdx.y);
    // Tiles are numbered row by row in a 1D grid, so the height is not
    // capped by the 65535 blocks of grid y.
    const unsigned int tiles_x = static_cast<unsigned int>((job.dst_width + kTileW - 1) / kTileW);
    const std::int64_t x0 = static_cast<std::int64_t>(blockIdx.x % tiles_x) * kTileW;
    const std::int64_t y0 = static_cast<std::int64_t>(blockIdx.x / tiles_x) * kTileH;
    const std::int64_t x = x0 + tx;
    const std::int64_t y = y0 + ty;
    // At the right and bottom tails the tile is narrower than the block.
    const int tile_w = static_cast<int>(job.dst_width - x0 < kTileW ? job.dst_width - x0 : kTileW);
    const int tile_h =
        static_cast<int>(job.dst_height - y0 < kTileH ? job.dst_height - y0 : kTileH);
    const bool has_output = tx < tile_w && ty < tile_h;

    // The tile is the input under the block's outputs, the pixel each keeps
    // the alpha of: (x + centre_x, y + centre_y), always inside the image,
    // even for `valid`. Tail threads have none and load nothing.
    if (has_output) {
        for (int c = 0; c < job.filtered_channels; ++c) {
            s_tile[c][ty][tx] = load_raw<In>(job, x + job.centre_x, y + job.centre_y, c);
        }
    }
    __syncthreads();
    if (!has_output) return;

    // Tap (i, j) reads input (x + origin_x + i, y + origin_y + j), which is
    // tile element (tx + i - anchor_x, ty + j - anchor_y): shared memory
    // when that lies in the loaded tile, else global memory through the
    // border policy (load_bordered reads with __ldg).
    const int anchor_x = static_cast<int>(job.centre_x - job.origin_x);
    const int anchor_y = static_cast<int>(job.centre_y - job.origin_y);
    for (int c = 0; c < job.filtered_channels; ++c) {
        float sum = 0.0f;
        for (int j = 0; j < job.filter_height; ++j) {
            const int row = ty + j - anchor_y;
            const bool row_in_tile = row >= 0 && row < tile_h;
            const std::int64_t in_y = y + job.origin_y + j;
            const float* taps = job.taps + j * job.filter_width;
            for (int i = 0; i < job.filter_width; ++i) {
                const int col = tx + i - anchor_x;
                const float v = (row_in_tile && col >= 0 && col < tile_w)
                                    ? s_tile[c][row][col]
                                    : load_bordered<In>(job, x + job.origin_x + i, in_y, c);
                sum += __ldg(taps + i) * v;
            }
        }
        store_result(job, x, y, c, sum);
    }
    copy_unfiltered<In>(job, x, y);
}

class SmemCachedBackend final : public CudaBackend {
public:
    std::string_view name() const override { return "smem-cached"; }
    std::optional<int> auto_rank(const Job&) const override { return kRankSmemCached; }
    std::string_view summary() const override {
        return "own tile in shared memory, halo read from global through the caches";
    }

protected:
    Support check_job(const Job& job, const DeviceInfo&) const override {
        if (job.filtered_channels() > kMaxChannels) {
            return Support::no(fmt::format("{} channels; the shared tile holds at most {}",
                                           job.filtered_channels(), kMaxChannels));
        }
        if (tile_count(job.dst.width, job.dst.height) > kMaxGridX) {
            return Support::no("the image has more tiles than a CUDA grid has blocks");
        }
        return Support::yes();
    }

    std::unique_ptr<LaunchPlan> plan(const Job&, const DeviceJob&, const Tuning&,
                                     cudaStream_t) const override {
        return launch_only([](const DeviceJob& job, cudaStream_t stream) {
            // `valid` with a filter larger than the image leaves nothing to
            // do (and a zero-sized grid is a launch error).
            if (job.dst_width <= 0 || job.dst_height <= 0) return;
            const dim3 block(kTileW, kTileH);
            const dim3 grid(static_cast<unsigned int>(tile_count(job.dst_width, job.dst_height)));
            dispatch_input_depth(job.in_depth, [&](auto sample) {
                smem_cached_kernel<decltype(sample)><<<grid, block, 0, stream>>>(job);
            });
        });
    }
};

}  // namespace

std::unique_ptr<Backend> make_smem_cached_backend() {
    return std::make_unique<SmemCachedBackend>();
}

}  // namespace cudaconv
