// smem: each block computes a tile of outputs from shared memory. All its
// threads first load, cooperatively, the input the tile needs (the tile
// plus a halo of filter_width-1 columns and filter_height-1 rows, already
// through the border policy and converted to float), then every tap reads
// shared memory (lecture "tiled", conv test repo). The taps stay in global
// memory, where the warp-wide broadcast of one tap hits the L1.
#include <cuda_runtime.h>

#include <map>
#include <mutex>
#include <utility>

#include <fmt/format.h>

#include "kernels/runtime/cuda_backend.hpp"
#include "kernels/runtime/cuda_check.hpp"
#include "kernels/runtime/cuda_registry.hpp"
#include "kernels/device/device_common.cuh"

namespace cudaconv {
namespace {

// 32 columns: a warp is one tile row, so it reads 32 consecutive shared
// words per tap (no bank conflicts) and loads whole rows from global.
constexpr int kTileW = 32;
// 16 rows: 512 threads per block amortise the halo (34x18 loads for 32x16
// outputs with a 3x3 filter) while leaving 128 registers per thread.
constexpr int kTileH = 16;
constexpr int kThreads = kTileW * kTileH;

// The shared tile: the block's outputs plus the halo. It is planar (one
// plane per filtered channel) so that a warp reading one channel reads
// consecutive words.
struct TileShape {
    int width = 0;   // kTileW + filter_width - 1
    int height = 0;  // kTileH + filter_height - 1
};

// Shared bytes for the tile plus halo; 64-bit so absurd filters cannot wrap.
std::size_t tile_bytes(std::int64_t filter_width, std::int64_t filter_height, int channels) {
    return static_cast<std::size_t>(kTileW + filter_width - 1) *
           static_cast<std::size_t>(kTileH + filter_height - 1) *
           static_cast<std::size_t>(channels) * sizeof(float);
}

// The grid's x limit, 2^31 - 1 blocks.
constexpr std::int64_t kMaxGridX = 2147483647;

std::int64_t tile_count(std::int64_t width, std::int64_t height) {
    return ((width + kTileW - 1) / kTileW) * ((height + kTileH - 1) / kTileH);
}

template <typename In>
__global__ void __launch_bounds__(kThreads) smem_kernel(DeviceJob job, TileShape tile) {
    extern __shared__ float s_tile[];  // [filtered_channels][tile.height][tile.width]
    const int tx = static_cast<int>(threadIdx.x);
    const int ty = static_cast<int>(threadIdx.y);
    // Tiles are numbered row by row in a 1D grid, so the height is not
    // capped by the 65535 blocks of grid y.
    const unsigned int tiles_x = static_cast<unsigned int>((job.dst_width + kTileW - 1) / kTileW);
    const std::int64_t x0 = static_cast<std::int64_t>(blockIdx.x % tiles_x) * kTileW;
    const std::int64_t y0 = static_cast<std::int64_t>(blockIdx.x / tiles_x) * kTileH;

    // Load only what this block's in-image outputs read: at the right and
    // bottom tails the tile is narrower, and for `valid` the input past it
    // lies outside the image.
    const int out_w = static_cast<int>(job.dst_width - x0 < kTileW ? job.dst_width - x0 : kTileW);
    const int out_h = static_cast<int>(job.dst_height - y0 < kTileH ? job.dst_height - y0 : kTileH);
    const int load_w = out_w + job.filter_width - 1;
    const int load_h = out_h + job.filter_height - 1;
    const int plane = tile.width * tile.height;
    // Tile element (col, row) is input (x0 + origin_x + col, y0 + origin_y + row).
    const std::int64_t in_x0 = x0 + job.origin_x;
    const std::int64_t in_y0 = y0 + job.origin_y;
    for (int k = ty * kTileW + tx; k < load_w * load_h; k += kThreads) {
        const int row = k / load_w;
        const int col = k - row * load_w;
        for (int c = 0; c < job.filtered_channels; ++c) {
            s_tile[c * plane + row * tile.width + col] =
                load_bordered<In>(job, in_x0 + col, in_y0 + row, c);
        }
    }
    __syncthreads();

    // Tail threads helped load; they have no output of their own.
    if (tx >= out_w || ty >= out_h) return;
    const std::int64_t x = x0 + tx;
    const std::int64_t y = y0 + ty;
    for (int c = 0; c < job.filtered_channels; ++c) {
        const float* s_channel = s_tile + c * plane;
        float sum = 0.0f;
        for (int j = 0; j < job.filter_height; ++j) {
            const float* s_row = s_channel + (ty + j) * tile.width + tx;
            const float* taps = job.taps + j * job.filter_width;
            for (int i = 0; i < job.filter_width; ++i) sum += __ldg(taps + i) * s_row[i];
        }
        store_result(job, x, y, c, sum);
    }
    copy_unfiltered<In>(job, x, y);
}

// Calls f(kernel) with the smem_kernel instantiation for the input depth.
template <typename F>
void with_kernel(Depth depth, F&& f) {
    dispatch_input_depth(depth, [&](auto sample) { f(smem_kernel<decltype(sample)>); });
}

// Lets `kernel` take `bytes` of dynamic shared memory: the limit only
// rises, under a lock, so that a run of a smaller tile on another thread
// never lowers it below what a larger one's launches need. CUDA holds the
// limit a device, so it is kept a device too.
void allow_dynamic_shared(const void* kernel, int bytes) {
    static std::mutex lock;
    static std::map<std::pair<int, const void*>, int> allowed;
    const std::lock_guard<std::mutex> guard(lock);
    int& limit = allowed[{current_device().index, kernel}];
    if (bytes <= limit) return;
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    limit = bytes;
}

class SmemBackend final : public CudaBackend {
public:
    std::string_view name() const override { return "smem"; }
    std::optional<int> auto_rank(const Job&) const override { return kRankSmem; }
    std::string_view summary() const override {
        return "input tile + halo in shared memory, loaded by all threads";
    }

protected:
    Support check_job(const Job& job, const DeviceInfo& device) const override {
        const Filter& f = job.params.filter;
        const std::size_t need = tile_bytes(f.width, f.height, job.filtered_channels());
        if (need > device.shared_memory_per_block_optin) {
            return Support::no(fmt::format(
                "the {}x{} filter needs a {}x{} tile of {} channel(s), {} KB of shared memory; "
                "{} has {} KB per block",
                f.width, f.height, kTileW + f.width - 1, kTileH + f.height - 1,
                job.filtered_channels(), (need + 1023) / 1024, device.name,
                device.shared_memory_per_block_optin / 1024));
        }
        if (tile_count(job.dst.width, job.dst.height) > kMaxGridX) {
            return Support::no("the image has more tiles than a CUDA grid has blocks");
        }
        return Support::yes();
    }

    std::unique_ptr<LaunchPlan> plan(const Job&, const DeviceJob& device_job, const Tuning&,
                                     cudaStream_t) const override {
        // Past 48 KB a kernel must opt in to its dynamic shared memory.
        const int bytes = static_cast<int>(tile_bytes(
            device_job.filter_width, device_job.filter_height, device_job.filtered_channels));
        with_kernel(device_job.in_depth, [&](auto kernel) {
            allow_dynamic_shared(reinterpret_cast<const void*>(kernel), bytes);
        });
        return launch_only([](const DeviceJob& job, cudaStream_t stream) {
            // `valid` with a filter larger than the image leaves nothing to
            // do (and a zero-sized grid is a launch error).
            if (job.dst_width <= 0 || job.dst_height <= 0) return;
            const TileShape tile{kTileW + job.filter_width - 1, kTileH + job.filter_height - 1};
            const std::size_t bytes =
                tile_bytes(job.filter_width, job.filter_height, job.filtered_channels);
            const dim3 block(kTileW, kTileH);
            const dim3 grid(static_cast<unsigned int>(tile_count(job.dst_width, job.dst_height)));
            with_kernel(job.in_depth,
                        [&](auto kernel) { kernel<<<grid, block, bytes, stream>>>(job, tile); });
        });
    }
};

}  // namespace

std::unique_ptr<Backend> make_smem_backend() { return std::make_unique<SmemBackend>(); }

}  // namespace cudaconv
