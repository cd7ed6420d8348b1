// fast's register path for gray f32 images under a 3x3 filter (u8 jobs go
// to its walk, kernels/fast/fast_registers_u8.cu; kernels/fast/fast.cu picks either
// before the strip path): each warp takes a block of the image 32 vectors
// (128 samples) wide and R rows down, loads its R + 2 input rows straight
// into registers, all of them at once, sums the R output rows and stores
// them, and is done, as a copy kernel's threads are. A block of 8 warps
// takes 8 such blocks side by side, and the grid holds one warp a block of
// rows (not a persistent grid: a warp that walks several blocks waits for
// each one's loads in turn).
//  - Every lane loads one 16-byte vector of each row; the samples left and
//    right of it come from the neighbouring lanes by shuffles, and lanes 0
//    and 31 load theirs. Every lane writes.
//  - Blocks whose rows and samples (the outer lanes' neighbours too) all
//    lie inside the image take plain loads; the rest (the image's sides,
//    top and bottom) work out each of their 6 columns and R + 2 rows
//    through the border policy first and then load them all, so that their
//    loads are in flight together too.
// Against the strip path (a warp walking down a band through a ring of
// rows in shared memory) this has no ring to wait on and no per-row
// bookkeeping: on an H100, gray f32 3x3 at 4000x3000 takes 37.5 us against
// the strip path's 41.3, and 2000x1000 10.0 against 13.2.
#include "kernels/fast/fast_registers.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "kernels/device/border_columns.cuh"
#include "kernels/runtime/cuda_check.hpp"
#include "kernels/device/device_common.cuh"
#include "kernels/fast/fast_strips.hpp"
#include "kernels/device/vector_store.cuh"

namespace cudaconv {
namespace {

__constant__ float c_taps[9];

constexpr int kWarpsPerBlock = 8;
constexpr int kLaneSamples = 4;                  // a 16-byte vector of floats
constexpr int kWarpSamples = 32 * kLaneSamples;  // a block's width

// Output rows [y0, y0 + R) of samples [k, k + 4) of this lane, from its
// input rows' windows: win[i] is input row y0 - 1 + i at samples k - 1 ...
// k + 4. Summed in the filter's row order, as cpu-ref sums.
template <int R>
__device__ __forceinline__ void store_block(const DeviceJob& job, const float (&win)[R + 2][6],
                                            int k, std::int64_t y0, int width) {
#pragma unroll
    for (int o = 0; o < R; ++o) {
        if (k >= width || y0 + o >= job.src_height) return;
        float values[kLaneSamples];
#pragma unroll
        for (int s = 0; s < kLaneSamples; ++s) {
            float sum = 0.0f;
#pragma unroll
            for (int j = 0; j < 3; ++j) {
#pragma unroll
                for (int i = 0; i < 3; ++i) sum += c_taps[j * 3 + i] * win[o + j][s + i];
            }
            values[s] = finish_value(sum, job.scale, job.delta, job.take_abs);
        }
        std::byte* out_row = job.dst + (y0 + o) * job.dst_pitch;
        if (k + kLaneSamples <= width) {
            store_samples_in<kLaneSamples>(job.out_depth, out_row, k, values);
        } else {
            for (int s = 0; s < kLaneSamples && k + s < width; ++s) {
                store_output(job, k + s, y0 + o, 0, values[s]);
            }
        }
    }
}

template <int R>
__global__ void __launch_bounds__(32 * kWarpsPerBlock)
    registers_kernel(const __grid_constant__ DeviceJob job, int across) {
    const int lane = static_cast<int>(threadIdx.x) % 32;
    const std::int64_t item =
        static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + static_cast<int>(threadIdx.x) / 32;
    const int column = static_cast<int>(item % across);
    const std::int64_t y0 = item / across * R;
    if (y0 >= job.src_height) return;  // whole warps: the shuffles below see all 32 lanes
    const int width = static_cast<int>(job.src_width);  // < 2^30 (registers_f32_refusal)
    const int k = column * kWarpSamples + lane * kLaneSamples;

    float win[R + 2][6];
    const bool interior = y0 >= 1 && y0 + R + 1 <= job.src_height && column > 0 &&
                          (column + 1) * kWarpSamples < width;  // uniform
    if (interior) {
        const float* row = reinterpret_cast<const float*>(job.src + (y0 - 1) * job.src_pitch) + k;
#pragma unroll
        for (int i = 0; i < R + 2; ++i) {
            const float4 v = __ldg(reinterpret_cast<const float4*>(row));
            win[i][1] = v.x, win[i][2] = v.y, win[i][3] = v.z, win[i][4] = v.w;
            win[i][0] = lane == 0 ? __ldg(row - 1) : 0.0f;
            win[i][5] = lane == 31 ? __ldg(row + kLaneSamples) : 0.0f;
            row = reinterpret_cast<const float*>(reinterpret_cast<const std::byte*>(row) +
                                                 job.src_pitch);
        }
    } else {
        // Every lane loads all 6 of its columns here (the shuffles below
        // give the inner lanes the same values again).
        int columns[6];  // -1: the constant border
#pragma unroll
        for (int q = 0; q < 6; ++q) {
            const int x = k - 1 + q;
            const std::int64_t at = static_cast<unsigned int>(x) < static_cast<unsigned int>(width)
                                        ? x
                                        : border_index_out_of_line(job.border, x, width);
            columns[q] = at == kBorderConstant ? -1 : static_cast<int>(at);
        }
        const float* rows[R + 2];  // nullptr: the constant border
#pragma unroll
        for (int i = 0; i < R + 2; ++i) {
            const std::int64_t at = image_row(job, y0 - 1 + i);
            rows[i] = at == kBorderConstant
                          ? nullptr
                          : reinterpret_cast<const float*>(job.src + at * job.src_pitch);
        }
#pragma unroll
        for (int i = 0; i < R + 2; ++i) {
#pragma unroll
            for (int q = 0; q < 6; ++q) {
                win[i][q] = rows[i] == nullptr || columns[q] < 0 ? job.border_value
                                                                 : __ldg(rows[i] + columns[q]);
            }
        }
    }
#pragma unroll
    for (int i = 0; i < R + 2; ++i) {
        const float left = __shfl_up_sync(0xffffffffu, win[i][4], 1);
        const float right = __shfl_down_sync(0xffffffffu, win[i][1], 1);
        if (lane != 0) win[i][0] = left;
        if (lane != 31) win[i][5] = right;
    }
    store_block<R>(job, win, k, y0, width);
}

template <int R>
void launch_rows(const DeviceJob& job, cudaStream_t stream) {
    const std::int64_t across = (job.src_width + kWarpSamples - 1) / kWarpSamples;
    const std::int64_t items = across * ((job.src_height + R - 1) / R);
    const std::int64_t blocks = (items + kWarpsPerBlock - 1) / kWarpsPerBlock;
    if (blocks > 0x7fffffff)
        throw CudaError("fast: the image has too many rows for the register path");
    registers_kernel<R><<<static_cast<unsigned int>(blocks), 32 * kWarpsPerBlock, 0, stream>>>(
        job, static_cast<int>(across));
}

// The u8 path's tap words, one a filter row (strips_dp4a_words' group 0),
// or none where some tap is not an integer in [-128, 127].
std::vector<std::int32_t> dp4a_rows(const std::vector<double>& taps) {
    const std::vector<std::int32_t> words = strips_dp4a_words(taps, 3);
    if (words.empty()) return {};
    return {words[0 * kDp4aGroups], words[1 * kDp4aGroups], words[2 * kDp4aGroups]};
}

}  // namespace

// Blocks of 4 rows: on an H100 faster than blocks of 8 and than the strip
// path at every size timed, 780x585 to 8000x6000 (4000x3000: 37.5 us
// against 38.4 in blocks of 8 and 41.3 on the strip path).
int registers_block_rows(std::int64_t width, std::int64_t height) {
    (void)width;  // no size measured where the strip path won
    (void)height;
    return 4;
}

std::vector<TuningParam> registers_f32_tuning_params() {
    return {{"block_rows", "output rows a warp's block: 4 or 8 (default 4)", 4, 8}};
}

namespace {

// The shape both register paths take: a centred 3x3 filter, a border other
// than valid, rows under 2^30 samples (32-bit sample indices).
std::string registers_shape_refusal(const DeviceJob& job, std::string_view path) {
    if (job.filter_width != 3 || job.filter_height != 3) {
        return fmt::format("{} takes 3x3 filters; this one is {}x{}", path, job.filter_width,
                           job.filter_height);
    }
    if (job.origin_x != -1 || job.origin_y != -1) {
        return fmt::format("{} needs the anchor at the filter's centre", path);
    }
    if (job.border == BorderMode::valid)
        return fmt::format("{} does not do the valid border", path);
    if (job.src_width * job.channels >= (std::int64_t{1} << 30)) {
        return fmt::format("{} takes rows of fewer than 2^30 samples", path);
    }
    return {};
}

}  // namespace

std::string registers_f32_refusal(const DeviceJob& job) {
    std::string refusal = registers_shape_refusal(job, "fast.registers");
    if (!refusal.empty()) return refusal;
    if (job.in_depth != Depth::f32 || job.channels != 1) {
        return "fast.registers takes gray (one-channel) f32 images";
    }
    return {};
}

// RGBA u8 images (every channel filtered) up to this many bytes a frame.
// The bound comes from RGB edge timed with the walk's rows copied by
// cp.async, against the strip path (H100): 0.63 of its time on the walk at
// 1000x1000 (3 MB), 0.77 at 1500x1000, 1.00 at 2000x1000 (6 MB), 0.79 at
// 3000x2000 (18 MB) and 1.03 at 4000x3000 (36 MB). With the rows loaded
// into registers, RGB takes the walk at every size timed: 2500x2000 18.8
// us against 24.9, 4000x3000 32.7 against 33.6, 6000x4000 57.1 against
// 59.7, 8000x6000 104.6 against 114.9. RGBA reaches the walk only with its
// alpha filtered (--alpha filter), which the bench does not time (it
// passes alpha through), so RGBA keeps the bound. Gray u8 is faster on the
// walk at every size timed.
constexpr std::int64_t kRgbaU8WalkBytes = std::int64_t{24} << 20;

std::string walk_u8_refusal(const DeviceJob& job, const std::vector<double>& taps) {
    std::string refusal = registers_shape_refusal(job, "fast.walk-u8");
    if (!refusal.empty()) return refusal;
    // The integer sums are the outputs as they are (scale 1, delta 0),
    // every channel filtered (no kept alpha), into u8; the rest stays with
    // the strip path.
    if (job.in_depth != Depth::u8 || job.out_depth != Depth::u8) {
        return "fast.walk-u8 takes u8 images to u8 outputs";
    }
    if (job.channels != 1 && job.channels != 3 && job.channels != 4) {
        return "fast.walk-u8 takes 1, 3 and 4 channels";
    }
    if (job.filtered_channels != job.channels) {
        return "fast.walk-u8 filters every channel (--alpha filter on RGBA)";
    }
    if (job.scale != 1.0f || job.delta != 0.0f) {
        return "fast.walk-u8 takes no --scale or --delta";
    }
    if (!border_fits_u8(job.border, job.border_value)) {
        return "fast.walk-u8 takes a constant border only as a whole u8 (0 to 255)";
    }
    if (dp4a_rows(taps).empty()) return "fast.walk-u8 takes integer taps in [-128, 127]";
    return {};
}

bool walk_u8_preferred(const DeviceJob& job) {
    return job.channels != 4 || job.src_width * job.channels * job.src_height <= kRgbaU8WalkBytes;
}

void registers_f32_prepare(const DeviceJob& job, cudaStream_t stream) {
    copy_taps_to_constant(c_taps, job, stream);
}

void registers_f32_launch(const DeviceJob& job, int block_rows, cudaStream_t stream) {
    switch (block_rows) {
        case 4: return launch_rows<4>(job, stream);
        case 8: return launch_rows<8>(job, stream);
        default: throw CudaError("fast.registers: blocks of 4 or 8 rows");
    }
}

}  // namespace cudaconv
