// fast-separable: a rank-1 filter (column[j] * row[i]) in one kernel, the
// intermediate never leaving shared memory. The two-kernel `separable`
// writes a float intermediate to global memory and reads it back (8 bytes
// of traffic per sample on top of the image's own); here each block owns a
// vertical strip of the image and walks down it:
//
//   1. stage 16 input rows of the strip plus its halo, through the border
//      policy, as floats, one plane per channel;
//   2. row pass: each thread makes 16 consecutive outputs of one row and
//      channel from a window of 16 + K - 1 staged samples, into a ring of
//      intermediate rows (interleaved, like the image);
//   3. column pass: each thread owns one sample column of the strip and
//      makes 16 outputs down it from 16 + K - 1 ring rows.
//
// Both passes keep 16 accumulators in registers, so a shared load feeds 16
// FMAs on average, and the taps are immediate operands from __constant__
// memory (K is a template parameter). The strip's intermediate rows are
// computed once, except the K - 1 rows of halo at each end of a strip.
// The input is read through the border policy (a constant border gives
// border_value samples), so every border mode is exact, as in the 2-D sum.
//
// Square odd filters 3..31 with a centred anchor, any input depth, every
// border but `valid`; anything else is refused with the reason. Jobs on u8
// images (a constant border's value a whole u8) go to the tensor-core path
// instead (kernels/fast_separable/separable_mma.cu), which multiplies the same taps as two
// band matrices, several times faster than this one on 4000x3000
// Gaussians (kernels/fast_separable/separable_mma.hpp).
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "filters/rank1.hpp"
#include "kernels/runtime/cuda_backend.hpp"
#include "kernels/runtime/cuda_check.hpp"
#include "kernels/runtime/cuda_registry.hpp"
#include "kernels/device/device_common.cuh"
#include "kernels/device/rank1_constants.cuh"
#include "kernels/fast_separable/fast_separable.hpp"
#include "kernels/fast_separable/separable_mma.hpp"

namespace cudaconv {
namespace {

// Every odd side up to 31: a Gaussian up to sigma 5 (6*sigma + 1 taps) and
// box filters up to 31. Each costs build time for 3 sample types.
constexpr std::array<int, 15> kSides{3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31};
constexpr int kMaxSide = 31;
// Rows staged and made per step, and outputs per thread in each pass.
constexpr int kStep = 16;
constexpr int kMaxThreads = 256;
// Strips are at most this many rows; the grid at most 65535 strips down.
constexpr int kMaxStripRows = 1024;
constexpr std::int64_t kMaxGridY = 65535;

__constant__ float c_row[kMaxSide];
__constant__ float c_column[kMaxSide];

// Pixels a strip spans: one block thread per sample column of the strip
// (256, or 192 for RGB), each row-pass thread making kStep of a channel's
// pixels.
int strip_pixels(int channels) {
    switch (channels) {
        case 1: return 256;
        case 2: return 128;
        default: return 64;
    }
}

// The column pass of a step lags the row pass by this many steps: the
// rows its last output reads must be made.
CC_HD constexpr int lag_steps(int side) { return (side - 1 + kStep - 1) / kStep; }
// Intermediate rows kept: a step's rows and those of the lagging steps,
// rounded to a power of two so that a row's slot is a mask.
CC_HD constexpr int ring_rows(int side) { return lag_steps(side) <= 1 ? 32 : 64; }

// Shared-memory layout, in floats. Strides are 1 modulo 32 banks: in the
// row pass a warp's 16 staged rows (or its 16 ring rows) then fall on 16
// different banks, and the other half-warp 16 samples further on.
struct Layout {
    int pixels;          // strip width
    int samples;         // pixels * channels: block threads
    int channel_floats;  // one staged row of one channel: pixels + side - 1
    int stage_stride;    // one staged row, every channel
    int ring_stride;     // one intermediate row
    int ring_rows;

    CC_HD Layout(int side, int channels, int strip)
        : pixels(strip),
          samples(strip * channels),
          channel_floats(strip + side - 1),
          stage_stride((channels * (strip + side - 1) + 31) / 32 * 32 + 1),
          ring_stride(strip * channels + 1),
          ring_rows(cudaconv::ring_rows(side)) {}

    CC_HD std::size_t floats() const {
        return static_cast<std::size_t>(kStep) * stage_stride +
               static_cast<std::size_t>(ring_rows) * ring_stride;
    }
};

// What one thread stages of every step: samples k and k + threads of each
// staged row (a row spans (pixels + K - 1) * C samples, fewer than twice
// the threads). The x border is the same for every row, so it is resolved
// once: the input sample each one reads in a row, or kConstant (the border
// value) or kUnused (past the right edge by more than the radius, where
// no output in the image reads it: a zero).
constexpr int kConstant = -1;
constexpr int kUnused = -2;
struct StagedColumns {
    std::int64_t source[2];  // sample index in an input row, or kConstant / kUnused
    int stage_offset[2];     // channel * channel_floats + pixel
    bool second;             // k + threads lies in the span
};

template <int K>
__device__ __forceinline__ StagedColumns staged_columns(const DeviceJob& job, const Layout& layout,
                                                        std::int64_t x_first) {
    StagedColumns s;
    const int channels = job.channels;
    const int span = layout.channel_floats * channels;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const int k = static_cast<int>(threadIdx.x) + h * layout.samples;
        const int pixel = k / channels;
        const int channel = k - pixel * channels;
        s.stage_offset[h] = channel * layout.channel_floats + pixel;
        const std::int64_t x = x_first + pixel;
        if (x >= job.src_width + K / 2) {
            s.source[h] = kUnused;
        } else {
            const std::int64_t sx = border_index(job.border, x, job.src_width);
            s.source[h] = sx == kBorderConstant ? kConstant : sx * channels + channel;
        }
    }
    s.second = static_cast<int>(threadIdx.x) + layout.samples < span;
    return s;
}

// Loads this thread's samples of staged rows 0 ... rows - 1 (input rows
// y_first on, through the y border) into v as floats; every load is issued
// before any is used. (Keeping u8 samples raw until the store, so that no
// conversion would wait on a load, is slower: 240 against 120 us on
// 4000x3000 f32 gaussian:sigma=5, and no faster on u8.)
template <typename In>
__device__ __forceinline__ float staged_sample(const In* row, std::int64_t source,
                                               float border_value) {
    if (source >= 0 && row != nullptr) return static_cast<float>(__ldg(row + source));
    return source == kUnused ? 0.0f : border_value;
}

template <typename In>
__device__ __forceinline__ void load_step(const DeviceJob& job, const StagedColumns& cols,
                                          std::int64_t y_first, int rows, float (&v)[2][kStep]) {
#pragma unroll
    for (int i = 0; i < kStep; ++i) {
        if (i < rows) {
            std::int64_t y = y_first + i;
            if (y < 0 || y >= job.src_height) y = border_index(job.border, y, job.src_height);
            const In* row = y == kBorderConstant
                                ? nullptr
                                : reinterpret_cast<const In*>(job.src + y * job.src_pitch);
            v[0][i] = staged_sample(row, cols.source[0], job.border_value);
            if (cols.second) v[1][i] = staged_sample(row, cols.source[1], job.border_value);
        }
    }
}

// The loaded samples to the staging planes: channel c of pixel p of row i
// at i * stage_stride + c * channel_floats + p.
__device__ __forceinline__ void store_step(float* stage, const Layout& layout,
                                           const StagedColumns& cols, const float (&v)[2][kStep]) {
#pragma unroll
    for (int i = 0; i < kStep; ++i) {
        stage[i * layout.stage_stride + cols.stage_offset[0]] = v[0][i];
        if (cols.second) stage[i * layout.stage_stride + cols.stage_offset[1]] = v[1][i];
    }
}

// Two blocks an SM at least caps registers at 128 a thread; left alone
// the compiler took up to 238 (hoisting shared loads), leaving one block
// an SM and nothing to run while it waits at a barrier.
template <int K, typename In>
__global__ void __launch_bounds__(kMaxThreads, 2)
    fast_separable_kernel(DeviceJob job, int strip, int strip_rows) {
    extern __shared__ float smem[];
    constexpr int kRadius = K / 2;
    constexpr int kLag = lag_steps(K);
    constexpr int kRing = ring_rows(K);
    constexpr int kWindow = kStep + K - 1;

    const int C = job.channels;
    const Layout layout(K, C, strip);
    float* stage = smem;
    float* ring = smem + kStep * layout.stage_stride;
    const int t = static_cast<int>(threadIdx.x);

    const std::int64_t x0 = static_cast<std::int64_t>(blockIdx.x) * strip;
    const std::int64_t y0 = static_cast<std::int64_t>(blockIdx.y) * strip_rows;
    const std::int64_t rows_left = job.src_height - y0;
    const int out_rows = rows_left < strip_rows ? static_cast<int>(rows_left) : strip_rows;
    const int mid_rows = out_rows + K - 1;  // intermediate rows the strip reads
    const int row_steps = (mid_rows + kStep - 1) / kStep;
    const int column_steps = (out_rows + kStep - 1) / kStep;

    // Row pass: this thread makes staged row t % 16, channel c, pixels
    // g*16 ... g*16 + 15 of the strip.
    const int groups = strip / kStep;
    const int row_item = t % kStep;
    const int row_channel = (t / kStep) / groups;
    const int row_group = (t / kStep) % groups;
    // Column pass: sample t of the strip's rows.
    const std::int64_t x = x0 + t / C;
    const int c = t % C;

    // Step s stages intermediate rows m = 16s ... 16s + 15, input rows
    // y0 - radius + m. Its loads are issued a step ahead, into registers,
    // so that they are in flight while the block computes.
    const std::int64_t x_first = x0 - kRadius;
    const StagedColumns cols = staged_columns<K>(job, layout, x_first);
    float loaded[2][kStep] = {};
    load_step<In>(job, cols, y0 - kRadius, min(kStep, mid_rows), loaded);

    for (int s = 0; s < max(row_steps, column_steps + kLag); ++s) {
        if (s < row_steps) {
            store_step(stage, layout, cols, loaded);
            __syncthreads();
            if (s + 1 < row_steps) {
                const int next = (s + 1) * kStep;
                load_step<In>(job, cols, y0 - kRadius + next, min(kStep, mid_rows - next), loaded);
            }
            const int m = s * kStep + row_item;
            if (m < mid_rows) {
                const float* window = stage + row_item * layout.stage_stride +
                                      row_channel * layout.channel_floats + row_group * kStep;
                float acc[kStep];
#pragma unroll
                for (int o = 0; o < kStep; ++o) acc[o] = 0.0f;
#pragma unroll
                for (int k = 0; k < kWindow; ++k) {
                    const float v = window[k];
#pragma unroll
                    for (int o = 0; o < kStep; ++o) {
                        const int i = k - o;  // resolved at compile time
                        if (i >= 0 && i < K) acc[o] = fmaf(c_row[i], v, acc[o]);
                    }
                }
                float* out = ring + (m & (kRing - 1)) * layout.ring_stride + row_group * kStep * C +
                             row_channel;
#pragma unroll
                for (int o = 0; o < kStep; ++o) out[o * C] = acc[o];
            }
        }
        __syncthreads();

        const int b = s - kLag;
        if (b >= 0 && b < column_steps && x < job.src_width) {
            float acc[kStep];
#pragma unroll
            for (int o = 0; o < kStep; ++o) acc[o] = 0.0f;
            const int first = b * kStep;
#pragma unroll
            for (int k = 0; k < kWindow; ++k) {
                const float v = ring[((first + k) & (kRing - 1)) * layout.ring_stride + t];
#pragma unroll
                for (int o = 0; o < kStep; ++o) {
                    const int j = k - o;
                    if (j >= 0 && j < K) acc[o] = fmaf(c_column[j], v, acc[o]);
                }
            }
            // Unrolled with the bound inside: a loop that stopped early would
            // index acc at run time and put it in local memory.
#pragma unroll
            for (int o = 0; o < kStep; ++o) {
                if (first + o >= out_rows) break;
                const std::int64_t y = y0 + first + o;
                float value = finish_value(acc[o], job.scale, job.delta, job.take_abs);
                if (c >= job.filtered_channels) {  // a kept alpha: the input's own
                    value = load_raw<In>(job, x + job.centre_x, y + job.centre_y, c);
                }
                store_output(job, x, y, c, value);
            }
        }
    }
}

// Calls f(kernel<K, In>) for the job's side and input depth, false when
// the side is not instantiated.
template <typename F, std::size_t... I>
bool with_kernel_sides(int side, Depth depth, F&& f, std::index_sequence<I...>) {
    bool found = false;
    dispatch_input_depth(depth, [&](auto sample) {
        using In = decltype(sample);
        found = ((side == kSides[I] && (f(fast_separable_kernel<kSides[I], In>), true)) || ...);
    });
    return found;
}
template <typename F>
bool with_kernel(int side, Depth depth, F&& f) {
    return with_kernel_sides(side, depth, std::forward<F>(f),
                             std::make_index_sequence<kSides.size()>{});
}

bool is_instantiated_side(int side) {
    return std::find(kSides.begin(), kSides.end(), side) != kSides.end();
}

// Rows per strip: more rows share the K - 1 halo rows of the row pass,
// fewer give more blocks to fill the SMs. The cost of a strip is its
// row-pass rows plus its column-pass rows; the estimate is that per wave of
// blocks, and the best of a few heights wins.
int choose_strip_rows(std::int64_t width, std::int64_t height, int side, int strip,
                      int blocks_per_sm, int sms) {
    const std::int64_t across = (width + strip - 1) / strip;
    const std::int64_t per_wave =
        static_cast<std::int64_t>(std::max(1, blocks_per_sm)) * std::max(1, sms);
    int best = kMaxStripRows;
    double best_cost = std::numeric_limits<double>::infinity();
    for (int rows = kStep; rows <= kMaxStripRows; rows += kStep) {
        const std::int64_t blocks = across * ((height + rows - 1) / rows);
        if ((height + rows - 1) / rows > kMaxGridY) continue;
        const std::int64_t waves = (blocks + per_wave - 1) / per_wave;
        const double cost = static_cast<double>(waves) * (2.0 * rows + side - 1);
        if (cost < best_cost) {
            best_cost = cost;
            best = rows;
        }
        if (rows >= height) break;
    }
    return best;
}

// fast-separable.strips's limits: the CUDA-core path of this file.
Support strips_support(const Job& job, const DeviceInfo& device) {
    const ConvParams& p = job.params;
    const Filter& f = p.filter;
    if (f.width != f.height || !is_instantiated_side(f.width)) {
        return Support::no(fmt::format(
            "fast-separable.strips is built for odd square filters 3x3 to {0}x{0}; this one is "
            "{1}x{2}",
            kMaxSide, f.width, f.height));
    }
    if (!separate(f)) {
        return Support::no("the filter is not rank 1 (not an outer product of a row and a column)");
    }
    if (p.anchor_x != f.width / 2 || p.anchor_y != f.height / 2) {
        return Support::no("fast-separable.strips needs the anchor at the filter's centre");
    }
    if (p.border == BorderMode::valid) {
        return Support::no("fast-separable.strips does not do the valid border");
    }
    if (job.src.height > kMaxGridY * kMaxStripRows) {
        return Support::no("the image is taller than fast-separable.strips' grid can cover");
    }
    if (job.src.channels < 1 || job.src.channels > 4) {
        return Support::no("fast-separable.strips takes 1 to 4 channels");
    }
    const Layout layout(f.width, job.src.channels, strip_pixels(job.src.channels));
    const std::size_t bytes = layout.floats() * sizeof(float);
    if (bytes > device.shared_memory_per_block_optin) {
        return Support::no(fmt::format("needs {} KB of shared memory per block; {} has {} KB",
                                       (bytes + 1023) / 1024, device.name,
                                       device.shared_memory_per_block_optin / 1024));
    }
    return Support::yes();
}

// fast-separable.mma's limits: the tensor-core path (kernels/fast_separable/separable_mma.cu).
Support mma_support(const Job& job, const DeviceInfo& device) {
    if (device.cc_major < 8) {
        return Support::no(fmt::format(
            "fast-separable.mma needs tensor-core mma m16n8k16 (compute capability 8.0); {} is "
            "{}.{}",
            device.name, device.cc_major, device.cc_minor));
    }
    const DeviceJob dj = device_job_of(job);
    if (!mma_take(job, dj)) {
        return Support::no(
            "fast-separable.mma takes rank-1 odd square filters up to 33x33, centred, on u8 "
            "images of 1 to 4 channels, every border but valid (a constant one a whole u8)");
    }
    const std::size_t bytes = mma_shared_bytes(dj);
    if (bytes > device.shared_memory_per_block_optin) {
        return Support::no(fmt::format(
            "fast-separable.mma needs {} KB of shared memory per block; {} has {} KB",
            (bytes + 1023) / 1024, device.name, device.shared_memory_per_block_optin / 1024));
    }
    return Support::yes();
}

std::vector<TuningParam> strips_params() {
    return {{"strip_rows",
             "rows a block's strip, a multiple of 16 (default: the fewest waves of blocks)", kStep,
             kMaxStripRows}};
}
std::vector<TuningParam> mma_params() {
    return {{"max_blocks", "the most CUDA blocks (default: a block a tile)", 1, 1 << 30}};
}

// One run of the CUDA-core path: the taps in constant memory (held until the
// run ends) and the strips' shape.
class StripsRun final : public LaunchPlan {
public:
    StripsRun(const Job& job, const DeviceJob& dj, const Tuning& tuning, cudaStream_t stream)
        : lock_(lock_constant_taps(stream)) {
        taps_.upload(job.params.filter, "fast-separable", c_row, c_column, stream);
        strip_ = strip_pixels(dj.channels);
        const Layout layout(dj.filter_width, dj.channels, strip_);
        shared_bytes_ = layout.floats() * sizeof(float);
        int blocks_per_sm = 1;
        const bool found = with_kernel(dj.filter_width, dj.in_depth, [&](auto kernel) {
            // Past 48 KB a kernel must opt in to its dynamic shared memory.
            CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(shared_bytes_)));
            CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                &blocks_per_sm, kernel, layout.samples, shared_bytes_));
        });
        if (!found) {
            throw CudaError(fmt::format("fast-separable: no instantiation for a {}x{} filter",
                                        dj.filter_width, dj.filter_height));
        }
        strip_rows_ = choose_strip_rows(dj.src_width, dj.src_height, dj.filter_width, strip_,
                                        blocks_per_sm, current_device().multiprocessors);
        // A set strip height: for the tests, whose small images would
        // otherwise always get the shortest strips (and never wrap the ring
        // of intermediate rows), and for tuning.
        if (const auto rows = tuning.get("strip_rows")) {
            if (*rows < kStep || *rows % kStep != 0 || *rows > kMaxStripRows ||
                (dj.src_height + *rows - 1) / *rows > kMaxGridY) {
                throw std::invalid_argument(fmt::format(
                    "fast-separable.strips: strip_rows is a multiple of {} up to {}, and at most "
                    "{} strips down the image",
                    kStep, kMaxStripRows, kMaxGridY));
            }
            strip_rows_ = *rows;
        }
    }

    void launch(const DeviceJob& job, cudaStream_t stream) const override {
        if (job.dst_width <= 0 || job.dst_height <= 0) return;
        with_kernel(job.filter_width, job.in_depth, [&](auto kernel) {
            const dim3 grid(blocks_for(job.src_width, strip_),
                            blocks_for(job.src_height, strip_rows_));
            kernel<<<grid, strip_ * job.channels, shared_bytes_, stream>>>(job, strip_,
                                                                           strip_rows_);
        });
    }
    std::string_view path() const override { return "fast-separable.strips"; }

private:
    ConstantTapsLock lock_;
    Rank1Constants taps_;
    int strip_ = 0;
    int strip_rows_ = kStep;
    std::size_t shared_bytes_ = 0;
};

// One run of the tensor-core path.
class MmaRun final : public LaunchPlan {
public:
    MmaRun(const Job& job, const DeviceJob& dj, const Tuning& tuning, cudaStream_t stream)
        : lock_(lock_constant_taps(stream)),
          mma_(job, dj, tuning.get("max_blocks").value_or(0), stream) {}
    void launch(const DeviceJob& job, cudaStream_t stream) const override {
        if (job.dst_width <= 0 || job.dst_height <= 0) return;
        mma_.launch(job, stream);
    }
    std::string_view path() const override { return "fast-separable.mma"; }

private:
    ConstantTapsLock lock_;
    MmaPath mma_;
};

// fast-separable: the tensor-core path for every job it takes (measured
// faster on all of them, kernels/fast_separable/separable_mma.hpp), the CUDA-core path for
// the rest.
class FastSeparableBackend final : public CudaBackend {
public:
    std::string_view name() const override { return "fast-separable"; }
    bool runs_composed_chains(const Job&) const override { return true; }
    std::string_view summary() const override {
        return "rank-1 filters: tensor cores on u8 (up to 33x33), else one kernel with the "
               "intermediate in shared memory (odd square 3..31)";
    }
    std::optional<int> auto_rank(const Job& job) const override { return fast_separable_rank(job); }
    std::vector<TuningParam> tuning_params() const override {
        return fast_separable_tuning_params();
    }

protected:
    Support check_job(const Job& job, const DeviceInfo& device) const override {
        return fast_separable_support(job, device);
    }
    std::unique_ptr<LaunchPlan> plan(const Job& job, const DeviceJob& dj, const Tuning& tuning,
                                     cudaStream_t stream) const override {
        return fast_separable_plan(job, dj, tuning, stream);
    }
};

// The two paths by name: fast-separable.mma and fast-separable.strips.
class FastSeparablePath final : public CudaBackend {
public:
    enum class Kind { mma, strips };
    explicit FastSeparablePath(Kind kind) : kind_(kind) {}

    std::string_view name() const override {
        return kind_ == Kind::mma ? "fast-separable.mma" : "fast-separable.strips";
    }
    std::string_view summary() const override {
        return kind_ == Kind::mma ? "two banded matrix products on the tensor cores (u8)"
                                  : "one kernel a strip, the intermediate in shared memory";
    }
    std::string_view parent() const override { return "fast-separable"; }
    bool runs_composed_chains(const Job&) const override { return true; }
    std::optional<int> auto_rank(const Job&) const override { return std::nullopt; }
    std::vector<TuningParam> tuning_params() const override {
        return kind_ == Kind::mma ? mma_params() : strips_params();
    }

protected:
    Support check_job(const Job& job, const DeviceInfo& device) const override {
        return kind_ == Kind::mma ? mma_support(job, device) : strips_support(job, device);
    }
    std::unique_ptr<LaunchPlan> plan(const Job& job, const DeviceJob& dj, const Tuning& tuning,
                                     cudaStream_t stream) const override {
        if (kind_ == Kind::mma) return std::make_unique<MmaRun>(job, dj, tuning, stream);
        return std::make_unique<StripsRun>(job, dj, tuning, stream);
    }

private:
    Kind kind_;
};

}  // namespace

Support fast_separable_support(const Job& job, const DeviceInfo& device) {
    if (mma_support(job, device).ok) return Support::yes();
    return strips_support(job, device);
}

std::unique_ptr<LaunchPlan> fast_separable_plan(const Job& job, const DeviceJob& dj,
                                                const Tuning& tuning, cudaStream_t stream) {
    if (mma_support(job, current_device()).ok) {
        return std::make_unique<MmaRun>(job, dj, tuning, stream);
    }
    return std::make_unique<StripsRun>(job, dj, tuning, stream);
}

std::vector<TuningParam> fast_separable_tuning_params() {
    return merge_tuning_params({mma_params(), strips_params()});
}

std::unique_ptr<Backend> make_fast_separable_backend() {
    return std::make_unique<FastSeparableBackend>();
}

std::vector<std::unique_ptr<Backend>> make_fast_separable_paths() {
    std::vector<std::unique_ptr<Backend>> paths;
    paths.push_back(std::make_unique<FastSeparablePath>(FastSeparablePath::Kind::mma));
    paths.push_back(std::make_unique<FastSeparablePath>(FastSeparablePath::Kind::strips));
    return paths;
}

}  // namespace cudaconv
