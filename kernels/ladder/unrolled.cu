// unrolled: smem's tile + halo in shared memory, with the filter size a
// template parameter so that both tap loops unroll completely (Hofmann's
// constexpr kernel): no loop counters, every tap an immediate offset into
// shared memory and into the taps in __constant__ memory. Instantiated for
// a generated list of common sizes; any other size is refused. The border
// stays a run-time policy applied while loading the tile, so the count of
// instantiations is sizes x input depths, not x borders too.
#include <cuda_runtime.h>

#include <array>
#include <cstddef>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "kernels/runtime/cuda_backend.hpp"
#include "kernels/runtime/cuda_check.hpp"
#include "kernels/runtime/cuda_registry.hpp"
#include "kernels/device/device_common.cuh"

namespace cudaconv {
namespace {

struct FilterSize {
    int width = 0;
    int height = 0;
};

// 15: covers the named 3x3 filters, box/gaussian/motion up to 15 taps and
// gaussian:sigma up to about 2.4; each side costs seconds of build time,
// and past 15x15 the halo outweighs the tile (separable and fft take over).
constexpr int kLargestSide = 15;
constexpr int kOddSides = (kLargestSide + 1) / 2;  // 1, 3, ..., 15
// Squares of every odd side, then 1xN and Nx1 strips (row-only and
// column-only passes, motion blur) for the odd sides from 3.
constexpr std::size_t kSizeCount = kOddSides + 2 * (kOddSides - 1);

constexpr std::array<FilterSize, kSizeCount> make_instantiated_sizes() {
    std::array<FilterSize, kSizeCount> sizes{};
    std::size_t n = 0;
    for (int side = 1; side <= kLargestSide; side += 2) sizes[n++] = FilterSize{side, side};
    for (int side = 3; side <= kLargestSide; side += 2) sizes[n++] = FilterSize{side, 1};
    for (int side = 3; side <= kLargestSide; side += 2) sizes[n++] = FilterSize{1, side};
    return sizes;
}

// The one list every instantiation, check and message comes from.
constexpr std::array<FilterSize, kSizeCount> kSizes = make_instantiated_sizes();
static_assert(kSizes[kSizeCount - 1].height == kLargestSide, "kSizeCount counts every size");

// __constant__ holds the largest instantiated filter.
constexpr int kMaxTaps = kLargestSide * kLargestSide;

// 32 columns: a warp is one tile row, so each tap reads 32 consecutive
// shared words (no bank conflicts) and loads cover whole rows.
constexpr int kBlockX = 32;
// 16 rows: 512 threads amortise the halo ((32+14)x(16+14) loads for 32x16
// outputs at 15x15) and leave 128 registers per thread for the unrolled sums.
constexpr int kBlockY = 16;
constexpr int kThreads = kBlockX * kBlockY;
// Channels that can be filtered: RGBA with --alpha filter.
constexpr int kMaxChannels = 4;

// The grid's x limit, 2^31 - 1 blocks.
constexpr std::int64_t kMaxGridX = 2147483647;

// One copy a device, like any __constant__ symbol (each device loads its
// own module): plan() fills it before each run's launches, and runs
// on one device take turns on it (ConstantTapsLock).
__constant__ float c_taps[kMaxTaps];

std::int64_t tile_count(std::int64_t width, std::int64_t height) {
    return ((width + kBlockX - 1) / kBlockX) * ((height + kBlockY - 1) / kBlockY);
}

template <int FilterW, int FilterH, typename In>
__global__ void __launch_bounds__(kThreads) unrolled_kernel(DeviceJob job) {
    constexpr int kTileW = kBlockX + FilterW - 1;
    constexpr int kTileH = kBlockY + FilterH - 1;
    // Planar, so a warp reading one channel reads consecutive words.
    __shared__ float s_tile[kMaxChannels][kTileH][kTileW];

    const int tx = static_cast<int>(threadIdx.x);
    const int ty = static_cast<int>(threadIdx.y);
    // Tiles are numbered row by row in a 1D grid, so the height is not
    // capped by the 65535 blocks of grid y.
    const unsigned int tiles_x = static_cast<unsigned int>((job.dst_width + kBlockX - 1) / kBlockX);
    const std::int64_t x0 = static_cast<std::int64_t>(blockIdx.x % tiles_x) * kBlockX;
    const std::int64_t y0 = static_cast<std::int64_t>(blockIdx.x / tiles_x) * kBlockY;

    // Load only what this block's in-image outputs read: at the right and
    // bottom tails the tile is narrower, and for `valid` the input past it
    // lies outside the image. Nothing outside [0, load_w) x [0, load_h) is
    // ever read below.
    const int out_w = static_cast<int>(job.dst_width - x0 < kBlockX ? job.dst_width - x0 : kBlockX);
    const int out_h =
        static_cast<int>(job.dst_height - y0 < kBlockY ? job.dst_height - y0 : kBlockY);
    const int load_w = out_w + FilterW - 1;
    const int load_h = out_h + FilterH - 1;
    // Tile element (col, row) is input (x0 + origin_x + col, y0 + origin_y + row).
    const std::int64_t in_x0 = x0 + job.origin_x;
    const std::int64_t in_y0 = y0 + job.origin_y;
    for (int k = ty * kBlockX + tx; k < load_w * load_h; k += kThreads) {
        const int row = k / load_w;
        const int col = k - row * load_w;
        for (int c = 0; c < job.filtered_channels; ++c) {
            s_tile[c][row][col] = load_bordered<In>(job, in_x0 + col, in_y0 + row, c);
        }
    }
    __syncthreads();

    // Tail threads helped load; they have no output of their own.
    if (tx >= out_w || ty >= out_h) return;
    const std::int64_t x = x0 + tx;
    const std::int64_t y = y0 + ty;
    for (int c = 0; c < job.filtered_channels; ++c) {
        float sum = 0.0f;
#pragma unroll
        for (int j = 0; j < FilterH; ++j) {
#pragma unroll
            for (int i = 0; i < FilterW; ++i) {
                sum += c_taps[j * FilterW + i] * s_tile[c][ty + j][tx + i];
            }
        }
        store_result(job, x, y, c, sum);
    }
    copy_unfiltered<In>(job, x, y);
}

template <std::size_t I, typename In>
bool launch_size(const DeviceJob& job, dim3 grid, dim3 block, cudaStream_t stream) {
    unrolled_kernel<kSizes[I].width, kSizes[I].height, In><<<grid, block, 0, stream>>>(job);
    return true;
}

// Launches the instantiation for the job's filter size; false when there
// is none. The fold over the index list is the dispatch table, generated.
template <typename In, std::size_t... I>
bool launch_instantiated(const DeviceJob& job, dim3 grid, dim3 block, cudaStream_t stream,
                         std::index_sequence<I...>) {
    return ((job.filter_width == kSizes[I].width && job.filter_height == kSizes[I].height &&
             launch_size<I, In>(job, grid, block, stream)) ||
            ...);
}

bool is_instantiated(int width, int height) {
    for (const FilterSize& s : kSizes) {
        if (s.width == width && s.height == height) return true;
    }
    return false;
}

// "1x1, 3x3, ..., 15x15, 3x1, ..., 15x1, 1x3, ..., 1x15" for the refusal.
std::string instantiated_list() {
    std::string list;
    for (const FilterSize& s : kSizes) {
        if (!list.empty()) list += ", ";
        list += fmt::format("{}x{}", s.width, s.height);
    }
    return list;
}

class UnrolledBackend final : public CudaBackend {
public:
    std::string_view name() const override { return "unrolled"; }
    std::optional<int> auto_rank(const Job&) const override { return kRankUnrolled; }
    std::string_view summary() const override {
        return "smem tiling with the filter size a template parameter, loops unrolled";
    }

protected:
    Support check_job(const Job& job, const DeviceInfo&) const override {
        const Filter& f = job.params.filter;
        if (!is_instantiated(f.width, f.height)) {
            return Support::no(fmt::format("unrolled has {} instantiations; this filter is {}x{}",
                                           instantiated_list(), f.width, f.height));
        }
        if (job.filtered_channels() > kMaxChannels) {
            return Support::no(fmt::format("at most {} filtered channels", kMaxChannels));
        }
        if (tile_count(job.dst.width, job.dst.height) > kMaxGridX) {
            return Support::no("the image has more tiles than a CUDA grid has blocks");
        }
        return Support::yes();
    }

    std::unique_ptr<LaunchPlan> plan(const Job&, const DeviceJob& device_job, const Tuning&,
                                     cudaStream_t stream) const override {
        return plan_with_constant_taps(stream, [&] {
            copy_taps_to_constant(c_taps, device_job, stream);
            return &launch_unrolled;
        });
    }

    static void launch_unrolled(const DeviceJob& job, cudaStream_t stream) {
        // `valid` with a filter larger than the image leaves nothing to do
        // (and a zero-sized grid is a launch error).
        if (job.dst_width <= 0 || job.dst_height <= 0) return;
        const dim3 block(kBlockX, kBlockY);
        const dim3 grid(static_cast<unsigned int>(tile_count(job.dst_width, job.dst_height)));
        bool launched = false;
        dispatch_input_depth(job.in_depth, [&](auto sample) {
            launched = launch_instantiated<decltype(sample)>(
                job, grid, block, stream, std::make_index_sequence<kSizeCount>{});
        });
        if (!launched) {
            throw CudaError(fmt::format("unrolled: no instantiation for a {}x{} filter",
                                        job.filter_width, job.filter_height));
        }
    }
};

}  // namespace

std::unique_ptr<Backend> make_unrolled_backend() { return std::make_unique<UnrolledBackend>(); }

}  // namespace cudaconv
