// separable: a rank-1 filter (column[j] * row[i]) as a row pass and a column
// pass, as cuda-samples convolutionSeparable does, without its
// divisibility asserts: w + h taps per output instead of w * h.
//
//   row pass:    input (its depth) -> float intermediate, src_height rows of
//                dst_width pixels, the x border applied while loading;
//   column pass: intermediate -> output, the y border applied while loading
//                (an out-of-image row of the constant border is the border
//                value times the sum of the row taps, which is exactly what
//                the 2-D sum gives it), then scale/delta/abs/saturate.
//
// Both passes treat a row as a line of samples q = x * channels + c of the
// filtered channels: the column pass never needs to know about channels,
// and in the row pass tap i of sample q is sample q + i * channels, so a
// warp reads consecutive shared words for every tap.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <fmt/format.h>

#include "filters/rank1.hpp"
#include "filters/spec.hpp"
#include "kernels/runtime/cuda_backend.hpp"
#include "kernels/runtime/cuda_check.hpp"
#include "kernels/runtime/cuda_registry.hpp"
#include "kernels/runtime/cuda_resources.hpp"
#include "kernels/device/device_common.cuh"
#include "kernels/device/rank1_constants.cuh"

namespace cudaconv {
namespace {

// Every filter side the spec parser accepts (8 KB of the 64 KB).
constexpr int kMaxSide = kMaxFilterSide;

// Row pass: a warp spans 32 consecutive samples of one row and each thread
// makes kRowSteps of them, 32 apart, so the halo of (w-1)*channels samples
// is shared by 256 outputs; 4 rows per block make 128 threads.
constexpr int kRowThreadsX = 32;
constexpr int kRowThreadsY = 4;
constexpr int kRowSteps = 8;
constexpr int kRowTileSamples = kRowThreadsX * kRowSteps;

// Column pass: a warp reads 32 consecutive floats (128 bytes) of each
// intermediate row; 8 warps each make kColumnSteps outputs down the column,
// so the halo of h-1 rows is shared by 64 rows of outputs.
constexpr int kColumnThreadsX = 32;
constexpr int kColumnThreadsY = 8;
constexpr int kColumnSteps = 8;
constexpr int kColumnTileRows = kColumnThreadsY * kColumnSteps;

// Grid y is limited to 65535 blocks; both passes put their row tiles on x
// or their sample tiles on y accordingly (see launch()).
constexpr std::int64_t kMaxGridY = 65535;

// One copy a device, like any __constant__ symbol (each device loads its
// own module): plan() fills them before each run's launches, and runs
// on one device take turns on them (ConstantTapsLock).
__constant__ float c_row[kMaxSide];
__constant__ float c_column[kMaxSide];

// Shared bytes of each pass's tile: 64-bit so absurd filters cannot wrap.
std::size_t row_tile_bytes(std::int64_t filter_width, int channels) {
    return static_cast<std::size_t>(kRowThreadsY) *
           static_cast<std::size_t>(kRowTileSamples + (filter_width - 1) * channels) *
           sizeof(float);
}
std::size_t column_tile_bytes(std::int64_t filter_height) {
    return static_cast<std::size_t>(kColumnTileRows + filter_height - 1) *
           static_cast<std::size_t>(kColumnThreadsX) * sizeof(float);
}

// Samples per intermediate (and output) row, and the intermediate's bytes.
std::int64_t line_samples(std::int64_t dst_width, int channels) {
    return (dst_width > 0 ? dst_width : 0) * channels;
}
std::size_t intermediate_bytes(std::int64_t src_height, std::int64_t dst_width, int channels) {
    return static_cast<std::size_t>(src_height) *
           static_cast<std::size_t>(line_samples(dst_width, channels)) * sizeof(float);
}

// One block: kRowThreadsY rows y (blockIdx.x) by kRowTileSamples samples
// from q0 (blockIdx.y) of the intermediate. tmp[y][q] with q = x * fc + c is
// the sum over i of row[i] * input(x + origin_x + i, y, c), the input read
// through the x border (y is always inside the image).
template <typename In>
__global__ void __launch_bounds__(kRowThreadsX* kRowThreadsY)
    row_pass_kernel(DeviceJob job, float* tmp, std::int64_t samples) {
    extern __shared__ float s_rows[];  // [kRowThreadsY][tile_samples]
    const int fc = job.filtered_channels;
    const int tile_samples = kRowTileSamples + (job.filter_width - 1) * fc;
    const int tx = static_cast<int>(threadIdx.x);
    const int ty = static_cast<int>(threadIdx.y);
    const std::int64_t y = static_cast<std::int64_t>(blockIdx.x) * kRowThreadsY + ty;
    const std::int64_t q0 = static_cast<std::int64_t>(blockIdx.y) * kRowTileSamples;
    float* s_row = s_rows + ty * tile_samples;

    // Tile sample k is input sample q0 + k shifted by origin_x pixels:
    // pixel x0 + (r0 + k) / fc + origin_x, channel (r0 + k) % fc. Only the
    // samples an in-image output reads are loaded (for `valid`, the rest
    // lies outside the image); the others are zeroed, never read.
    const std::int64_t x0 = q0 / fc;
    const int r0 = static_cast<int>(q0 - x0 * fc);
    const std::int64_t load_end = samples + static_cast<std::int64_t>(job.filter_width - 1) * fc;
    for (int k = tx; k < tile_samples; k += kRowThreadsX) {
        float v = 0.0f;
        if (y < job.src_height && q0 + k < load_end) {
            const int p = (r0 + k) / fc;
            const int c = r0 + k - p * fc;
            v = load_bordered<In>(job, x0 + p + job.origin_x, y, c);
        }
        s_row[k] = v;
    }
    __syncthreads();

    if (y >= job.src_height) return;
    float* tmp_row = tmp + y * samples;
    for (int s = 0; s < kRowSteps; ++s) {
        const int t = tx + s * kRowThreadsX;
        if (q0 + t >= samples) break;
        float sum = 0.0f;
        for (int i = 0; i < job.filter_width; ++i) sum += c_row[i] * s_row[t + i * fc];
        tmp_row[q0 + t] = sum;
    }
}

// One block: kColumnThreadsX samples from blockIdx.x by kColumnTileRows
// output rows from blockIdx.y. Tile row r is intermediate row
// y0 + origin_y + r through the y border; the constant border's rows are
// border_row, the border value after the row pass.
template <typename In>
__global__ void __launch_bounds__(kColumnThreadsX* kColumnThreadsY)
    column_pass_kernel(DeviceJob job, const float* tmp, std::int64_t samples, float border_row) {
    extern __shared__ float s_columns[];  // [tile_rows][kColumnThreadsX]
    const int tile_rows = kColumnTileRows + job.filter_height - 1;
    const int tx = static_cast<int>(threadIdx.x);
    const int ty = static_cast<int>(threadIdx.y);
    const std::int64_t q = static_cast<std::int64_t>(blockIdx.x) * kColumnThreadsX + tx;
    const std::int64_t y0 = static_cast<std::int64_t>(blockIdx.y) * kColumnTileRows;

    // As in the row pass, only rows an in-image output reads are loaded.
    const std::int64_t load_end = job.dst_height + job.filter_height - 1;
    for (int r = ty; r < tile_rows; r += kColumnThreadsY) {
        float v = 0.0f;
        if (q < samples && y0 + r < load_end) {
            const std::int64_t sy = border_index(job.border, y0 + job.origin_y + r, job.src_height);
            v = sy == kBorderConstant ? border_row : __ldg(tmp + sy * samples + q);
        }
        s_columns[r * kColumnThreadsX + tx] = v;
    }
    __syncthreads();

    if (q >= samples) return;
    const int fc = job.filtered_channels;
    const std::int64_t x = q / fc;
    const int c = static_cast<int>(q - x * fc);
    for (int s = 0; s < kColumnSteps; ++s) {
        const int t = ty + s * kColumnThreadsY;
        const std::int64_t y = y0 + t;
        if (y >= job.dst_height) break;
        float sum = 0.0f;
        for (int j = 0; j < job.filter_height; ++j) {
            sum += c_column[j] * s_columns[(t + j) * kColumnThreadsX + tx];
        }
        store_result(job, x, y, c, sum);
        if (c == 0) copy_unfiltered<In>(job, x, y);  // once per pixel
    }
}

// Calls f(row_kernel, column_kernel) for the input depth.
template <typename F>
void with_kernels(Depth depth, F&& f) {
    dispatch_input_depth(depth, [&](auto sample) {
        using In = decltype(sample);
        f(row_pass_kernel<In>, column_pass_kernel<In>);
    });
}

// One run: the taps in constant memory (held until the run ends), the
// kernels' shared memory, and the intermediate rows.
class SeparableRun final : public LaunchPlan {
public:
    SeparableRun(const Job& job, const DeviceJob& dj, cudaStream_t stream)
        : lock_(lock_constant_taps(stream)) {
        taps_.upload(job.params.filter, "separable", c_row, c_column, stream);
        // An out-of-image row of the constant border: every sample is the
        // border value, so the row pass gives it times the row's sum.
        double row_sum = 0.0;
        for (const float t : taps_.row()) row_sum += t;
        border_row_ = static_cast<float>(static_cast<double>(dj.border_value) * row_sum);

        // Past 48 KB a kernel must opt in to its dynamic shared memory.
        row_bytes_ = row_tile_bytes(dj.filter_width, dj.filtered_channels);
        column_bytes_ = column_tile_bytes(dj.filter_height);
        with_kernels(dj.in_depth, [&](auto row_kernel, auto column_kernel) {
            CUDA_CHECK(cudaFuncSetAttribute(row_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(row_bytes_)));
            CUDA_CHECK(cudaFuncSetAttribute(column_kernel,
                                            cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(column_bytes_)));
        });
        const std::size_t bytes =
            intermediate_bytes(dj.src_height, dj.dst_width, dj.filtered_channels);
        d_tmp_ = device_array<float>(std::max<std::size_t>(1, bytes / sizeof(float)));
    }

    void launch(const DeviceJob& job, cudaStream_t stream) const override {
        // `valid` with a filter larger than the image leaves nothing to do
        // (and a zero-sized grid is a launch error).
        if (job.dst_width <= 0 || job.dst_height <= 0) return;
        const std::int64_t samples = line_samples(job.dst_width, job.filtered_channels);
        // Row tiles on grid x (2^31 - 1), sample tiles on y; the column pass
        // the other way round: limits checked in check_job().
        const dim3 row_block(kRowThreadsX, kRowThreadsY);
        const dim3 row_grid(blocks_for(job.src_height, kRowThreadsY),
                            blocks_for(samples, kRowTileSamples));
        const dim3 column_block(kColumnThreadsX, kColumnThreadsY);
        const dim3 column_grid(blocks_for(samples, kColumnThreadsX),
                               blocks_for(job.dst_height, kColumnTileRows));
        float* d_tmp = d_tmp_.get();
        with_kernels(job.in_depth, [&](auto row_kernel, auto column_kernel) {
            row_kernel<<<row_grid, row_block, row_bytes_, stream>>>(job, d_tmp, samples);
            CUDA_CHECK_LAUNCH();
            column_kernel<<<column_grid, column_block, column_bytes_, stream>>>(job, d_tmp, samples,
                                                                                border_row_);
        });
    }

private:
    ConstantTapsLock lock_;
    Rank1Constants taps_;
    float border_row_ = 0.0f;
    std::size_t row_bytes_ = 0;
    std::size_t column_bytes_ = 0;
    DeviceArray<float> d_tmp_;
};

class SeparableBackend final : public CudaBackend {
public:
    std::string_view name() const override { return "separable"; }
    bool runs_composed_chains(const Job&) const override { return true; }
    std::optional<int> auto_rank(const Job&) const override { return kRankSeparable; }
    std::string_view summary() const override {
        return "row pass + column pass for rank-1 filters (gaussian, box, sobel, ...)";
    }

protected:
    Support check_job(const Job& job, const DeviceInfo& device) const override {
        const Filter& f = job.params.filter;
        if (!separate(f)) {
            return Support::no(
                "the filter is not rank 1 (not an outer product of a row and a column)");
        }
        if (f.width > kMaxSide || f.height > kMaxSide) {
            return Support::no(fmt::format("filter sides up to {} taps", kMaxSide));
        }
        const int fc = job.filtered_channels();
        const std::size_t need = std::max(row_tile_bytes(f.width, fc), column_tile_bytes(f.height));
        if (need > device.shared_memory_per_block_optin) {
            return Support::no(
                fmt::format("the {}x{} filter needs {} KB of shared memory per block; {} has {} KB",
                            f.width, f.height, (need + 1023) / 1024, device.name,
                            device.shared_memory_per_block_optin / 1024));
        }
        const std::int64_t samples = line_samples(job.dst.width, fc);
        if ((samples + kRowTileSamples - 1) / kRowTileSamples > kMaxGridY) {
            return Support::no(fmt::format("images up to {} samples wide ({} per row here)",
                                           kMaxGridY * kRowTileSamples, samples));
        }
        if ((job.dst.height + kColumnTileRows - 1) / kColumnTileRows > kMaxGridY) {
            return Support::no(
                fmt::format("images up to {} rows tall", kMaxGridY * kColumnTileRows));
        }
        return Support::yes();
    }

    std::size_t extra_device_bytes(const Job& job) const override {
        return intermediate_bytes(job.src.height, job.dst.width, job.filtered_channels());
    }

    std::unique_ptr<LaunchPlan> plan(const Job& job, const DeviceJob& dj, const Tuning&,
                                     cudaStream_t stream) const override {
        return std::make_unique<SeparableRun>(job, dj, stream);
    }
};

}  // namespace

std::unique_ptr<Backend> make_separable_backend() { return std::make_unique<SeparableBackend>(); }

}  // namespace cudaconv
