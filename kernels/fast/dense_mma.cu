// fast's tensor-core path: a filter of any shape up to 33x33 as sums of
// banded matrix products on the tensor cores (mma.sync m16n8k8, TF32
// operands, fp32 sums).
//
// For filter row i, a 16 x 8 block of outputs is sum over d of
// A(i, d) x T(i, d): A holds the 16 staged rows under the outputs, shifted
// down by i, and 8 staged columns from the outputs' own block shifted right
// by d blocks; T(i, d)[k][n] = f[i][8 d + k - n], the filter row as a band.
// A warp makes 16 rows by kGroups blocks of 8 columns: each A it loads
// feeds up to D blocks (D = dense_mma_blocks(w)), so a load serves several
// products.
//
// Precision (3xTF32): every staged sample and tap is split into a TF32 hi
// part and a TF32 lo part (the rest), and each product is hi x hi + lo x hi
// + hi x lo; the lo x lo term lies under 2^-22 of the product, about
// float32's own rounding. u8 samples (and a constant border's value that is
// a whole u8) are exact in TF32, so theirs is hi x hi + hi x lo, two
// products instead of three. The tensor cores sum with truncation, so each
// filter row's products gather in fresh accumulators (chains of at most 3 D
// products) that are then added to the outputs' totals in ordinary
// round-to-nearest floats: the error stays within the textbook bound of
// float32 summation that SPEC's tolerance allows.
//
// Each block walks (tile, channel) items of a persistent grid: it stages
// one channel of a 64 x 64 tile and its halo as hi and lo planes in shared
// memory, through the border policy at the image's sides, then each warp
// makes its 16 x 32 outputs. A tile whose staged samples include a NaN, an
// infinity or a magnitude past 2^126 (where the split would overflow, or
// the zeros of the band, 0 x Inf, would make NaN of outputs that never
// read it) is filtered by plain float sums from the image instead, so the
// outputs are what float arithmetic gives on every input.
#include "kernels/fast/dense_mma.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "kernels/runtime/cuda_backend.hpp"
#include "kernels/runtime/cuda_check.hpp"
#include "kernels/device/device_common.cuh"
#include "kernels/device/tf32_mma.cuh"

namespace cudaconv {
namespace {

constexpr int kGroups = 4;  // 8-column output blocks a warp makes across
constexpr int kWarpsAcross = 2;
constexpr int kWarpsDown = 4;
constexpr int kWarps = kWarpsAcross * kWarpsDown;
constexpr int kThreads = 32 * kWarps;
constexpr int kTileColumns = kWarpsAcross * 8 * kGroups;  // 64
constexpr int kTileRows = kWarpsDown * 16;                // 64
constexpr int kMaxBlocks = dense_mma_blocks(kDenseMmaLargestSide);
static_assert(kMaxBlocks == 5);
// Magnitudes from here up (and NaN) are not split: the tile is summed in
// plain floats instead.
constexpr float kSplitLimit = 0x1p126f;
// u8 samples are exact in TF32 (11 significant bits): their lo parts are
// zeros, so they need neither a lo plane nor the lo x hi products. The
// kernels for exact samples run u8 jobs whose constant border, if any, is
// a whole u8 too (exact_job).
bool exact_job(const DeviceJob& job) {
    return job.in_depth == Depth::u8 && border_fits_u8(job.border, job.border_value);
}

// The staged tile of one channel: a plane of TF32 hi parts and a plane of
// lo parts, rows of kStride floats. A's fragments come from each plane by
// ldmatrix (an 8 x 8 matrix of b16 is 8 rows of 4 TF32 words, lane l
// receiving row l / 4, word l % 4: the m16n8k8 A layout); its 8 rows of 16
// bytes fall on distinct banks when the stride is an odd number of 16-byte
// units.
template <int D>
struct Geometry {
    static constexpr int kStagedColumns = kTileColumns + 8 * (D - 1);
    static constexpr int kStride = kStagedColumns + 4;
    static_assert(kStride % 8 == 4);
    static constexpr int kTapStride = dense_mma_tap_stride(D);
    CC_HD static int rows(int filter_height) { return kTileRows + filter_height - 1; }
    // The tap table first (16-byte entries), then the planes: hi and lo,
    // or hi alone for samples exact in TF32.
    static std::size_t bytes(int filter_height, bool exact) {
        return sizeof(float4) * static_cast<std::size_t>(filter_height) * kTapStride +
               (exact ? 1 : 2) * sizeof(float) * static_cast<std::size_t>(rows(filter_height)) *
                   kStride;
    }
};

// The tap table, as dense_mma_tap_table builds it.
constexpr int kTableEntries = kDenseMmaLargestSide * dense_mma_tap_stride(kMaxBlocks);
__device__ float4 d_tap_table[kTableEntries];

struct Items {
    int tiles_across = 0;
    int count = 0;  // tiles times filtered channels
};

// Four 8 x 4 matrices of 32-bit words; lane l gives the address of row
// l % 8 of matrix l / 8 (16 bytes, 16-byte aligned).
__device__ __forceinline__ void ldmatrix_x4(float (&r)[4], const float* p) {
    std::uint32_t w[4];
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3])
                 : "r"(shared_address(p))
                 : "memory");
#pragma unroll
    for (int k = 0; k < 4; ++k) r[k] = __uint_as_float(w[k]);
}

// A sample the staged tile needs at (x, y) of channel c, which may lie
// outside the image. `valid` stages columns and rows past the image that
// only zero taps, or outputs past the image, see: any finite value does.
template <typename In>
__device__ __forceinline__ float staged_sample(const DeviceJob& job, std::int64_t x, std::int64_t y,
                                               int c) {
    if (job.border == BorderMode::valid &&
        (x < 0 || y < 0 || x >= job.src_width || y >= job.src_height)) {
        return 0.0f;
    }
    return load_bordered<In>(job, x, y, c);
}

// Stages rows [0, rows) of channel c from (xs, ys) on; see stage().
// Inside: every staged sample lies in the image, so each is read straight,
// with no test of its own (a tile's border tests, 64-bit, take 35 to 41
// instructions a row of loads in a profile of f32 15x15).
template <int D, typename In, bool Exact, bool Inside>
__device__ __forceinline__ bool stage_rows(const DeviceJob& job, float* hi, float* lo, int c,
                                           std::int64_t xs, std::int64_t ys, int rows) {
    using G = Geometry<D>;
    constexpr int kPerLane = (G::kStagedColumns + 31) / 32;
    constexpr int kRowsAtOnce = 4;
    const int lane = static_cast<int>(threadIdx.x) & 31;
    const int warp = static_cast<int>(threadIdx.x) >> 5;
    // Whether every staged column lies inside the image (the same for the
    // whole block): then a row's samples are read straight.
    const bool inside_across = Inside || (xs >= 0 && xs + G::kStagedColumns <= job.src_width);
    bool unsafe = false;
    for (int r0 = warp; r0 < rows; r0 += kRowsAtOnce * kWarps) {
        float v[kRowsAtOnce][kPerLane];
#pragma unroll
        for (int n = 0; n < kRowsAtOnce; ++n) {
            const int r = r0 + n * kWarps;
            if (r >= rows) break;
            const std::int64_t y = ys + r;
            const bool inside_down = Inside || (y >= 0 && y < job.src_height);
            const In* row =
                reinterpret_cast<const In*>(job.src + y * job.src_pitch) + xs * job.channels + c;
#pragma unroll
            for (int k = 0; k < kPerLane; ++k) {
                const int col = lane + 32 * k;
                if (col < G::kStagedColumns) {
                    v[n][k] = inside_across && inside_down
                                  ? static_cast<float>(__ldg(row + col * job.channels))
                                  : staged_sample<In>(job, xs + col, y, c);
                }
            }
        }
#pragma unroll
        for (int n = 0; n < kRowsAtOnce; ++n) {
            const int r = r0 + n * kWarps;
            if (r >= rows) break;
#pragma unroll
            for (int k = 0; k < kPerLane; ++k) {
                const int col = lane + 32 * k;
                if (col < G::kStagedColumns) {
                    unsafe |= !(fabsf(v[n][k]) < kSplitLimit);
                    if constexpr (Exact) {
                        hi[r * G::kStride + col] = v[n][k];
                    } else {
                        const float h = tf32_rna(v[n][k]);
                        hi[r * G::kStride + col] = h;
                        lo[r * G::kStride + col] = tf32_rna(v[n][k] - h);
                    }
                }
            }
        }
    }
    return unsafe;
}

// The staged tile of channel c: rows [0, rows) of staged columns from
// (xs, ys) on, through the border policy where they leave the image, as hi
// and lo planes: a warp a row, its lanes across, kRowsAtOnce rows' loads in
// flight. Returns whether this thread met a sample that cannot be split
// (see kSplitLimit).
template <int D, typename In, bool Exact>
__device__ __forceinline__ bool stage(const DeviceJob& job, float* hi, float* lo, int c,
                                      std::int64_t xs, std::int64_t ys, int rows) {
    using G = Geometry<D>;
    // The same for the whole block, so no warp diverges.
    const bool inside = xs >= 0 && xs + G::kStagedColumns <= job.src_width && ys >= 0 &&
                        ys + rows <= job.src_height;
    return inside ? stage_rows<D, In, Exact, true>(job, hi, lo, c, xs, ys, rows)
                  : stage_rows<D, In, Exact, false>(job, hi, lo, c, xs, ys, rows);
}

// Two neighbouring outputs of one row, (x, y) and (x + 1, y), finished and
// stored where they lie inside the output.
__device__ __forceinline__ void store_pair(const DeviceJob& job, std::int64_t x, std::int64_t y,
                                           int c, float s0, float s1) {
    if (y >= job.dst_height || x >= job.dst_width) return;
    const float v0 = finish_value(s0, job.scale, job.delta, job.take_abs);
    const float v1 = finish_value(s1, job.scale, job.delta, job.take_abs);
    if (job.out_depth == Depth::f32 && job.channels == 1 && x + 1 < job.dst_width) {
        float* p = reinterpret_cast<float*>(job.dst + y * job.dst_pitch) + x;
        if ((reinterpret_cast<std::uintptr_t>(p) & 7) == 0) {
            *reinterpret_cast<float2*>(p) = make_float2(v0, v1);
            return;
        }
    }
    store_output(job, x, y, c, v0);
    if (x + 1 < job.dst_width) store_output(job, x + 1, y, c, v1);
}

// The warp's 16 x 32 outputs of the staged channel c, on the tensor cores.
// Exact: the samples have no lo parts (exact_job).
template <int D, bool Exact>
__device__ __forceinline__ void filter_on_tensor_cores(const DeviceJob& job, const float4* taps,
                                                       const float* hi, const float* lo, int c,
                                                       std::int64_t x0, std::int64_t y0) {
    using G = Geometry<D>;
    constexpr int kInputBlocks = kGroups + D - 1;  // A column blocks a row of products reads
    const int lane = static_cast<int>(threadIdx.x) & 31;
    const int warp = static_cast<int>(threadIdx.x) >> 5;
    const int g = lane >> 2;
    const int t = lane & 3;
    const int row0 = (warp / kWarpsAcross) * 16;
    const int column0 = (warp % kWarpsAcross) * 8 * kGroups;
    // ldmatrix: lane l gives row l % 8 of matrix l / 8, the matrices being
    // A's rows 0-7 and 8-15 at columns 0-3, then at columns 4-7.
    const int a_offset =
        (row0 + (lane & 7) + 8 * ((lane >> 3) & 1)) * G::kStride + column0 + 4 * (lane >> 4);
    // The taps lane (g, t) needs, 8 d + t - g and 4 further, hi and lo.
    const float4* b_lane = taps + kDenseTapPad + t - g;

    float total[kGroups][4] = {};
    for (int i = 0; i < job.filter_height; ++i) {
        float4 b[D];
#pragma unroll
        for (int d = 0; d < D; ++d) b[d] = b_lane[i * G::kTapStride + 8 * d];
        float acc[kGroups][4] = {};
        const int a_row = a_offset + i * G::kStride;
#pragma unroll
        for (int kb = 0; kb < kInputBlocks; ++kb) {
            float a_hi[4], a_lo[4];
            ldmatrix_x4(a_hi, hi + a_row + 8 * kb);
            if constexpr (!Exact) ldmatrix_x4(a_lo, lo + a_row + 8 * kb);
#pragma unroll
            for (int d = 0; d < D; ++d) {
                const int w = kb - d;                 // the output block this product adds to
                if (w < 0 || w >= kGroups) continue;  // resolved at compile time
                mma_tf32(acc[w], a_hi, b[d].x, b[d].y);
                if constexpr (!Exact) mma_tf32(acc[w], a_lo, b[d].x, b[d].y);
                mma_tf32(acc[w], a_hi, b[d].z, b[d].w);
            }
        }
#pragma unroll
        for (int w = 0; w < kGroups; ++w) {
#pragma unroll
            for (int e = 0; e < 4; ++e) total[w][e] += acc[w][e];
        }
    }
    // Accumulator e of block w: row g + 8 (e / 2), column 8 w + 2 t + e % 2.
#pragma unroll
    for (int w = 0; w < kGroups; ++w) {
        const std::int64_t x = x0 + column0 + 8 * w + 2 * t;
        const std::int64_t y = y0 + row0 + g;
        store_pair(job, x, y, c, total[w][0], total[w][1]);
        store_pair(job, x, y + 8, c, total[w][2], total[w][3]);
    }
}

// Channel c of the tile at (x0, y0) in plain float sums, read from the
// image through the border policy: for tiles whose samples the split
// cannot take. Rare (NaN, infinities, huge values), so simple.
template <typename In>
__device__ void filter_in_floats(const DeviceJob& job, int c, std::int64_t x0, std::int64_t y0) {
    for (int k = static_cast<int>(threadIdx.x); k < kTileRows * kTileColumns; k += kThreads) {
        const std::int64_t x = x0 + k % kTileColumns;
        const std::int64_t y = y0 + k / kTileColumns;
        if (x < job.dst_width && y < job.dst_height) {
            store_result(job, x, y, c, direct_sum<In>(job, x, y, c));
        }
    }
}

template <int D, typename In, bool Exact>
__global__ void __launch_bounds__(kThreads, 2) dense_mma_kernel(DeviceJob job, Items items) {
    using G = Geometry<D>;
    extern __shared__ __align__(16) float4 shared_entries[];
    float4* taps = shared_entries;
    float* hi = reinterpret_cast<float*>(shared_entries + job.filter_height * G::kTapStride);
    float* lo = hi + G::rows(job.filter_height) * G::kStride;  // unused when exact
    const int rows = G::rows(job.filter_height);
    // The tap table (read after the first item's staging barrier).
    for (int k = static_cast<int>(threadIdx.x); k < job.filter_height * G::kTapStride;
         k += kThreads) {
        taps[k] = d_tap_table[k];
    }
    const int filtered = job.filtered_channels;
    for (int item = static_cast<int>(blockIdx.x); item < items.count;
         item += static_cast<int>(gridDim.x)) {
        // Channel-minor: the blocks on a tile's channels run side by side
        // and share its input lines in the caches.
        const int tile = item / filtered;
        const int c = item - tile * filtered;
        const int ty = tile / items.tiles_across;
        const std::int64_t x0 =
            static_cast<std::int64_t>(tile - ty * items.tiles_across) * kTileColumns;
        const std::int64_t y0 = static_cast<std::int64_t>(ty) * kTileRows;
        const bool unsafe =
            stage<D, In, Exact>(job, hi, lo, c, x0 + job.origin_x, y0 + job.origin_y, rows);
        if (__syncthreads_or(unsafe)) {
            filter_in_floats<In>(job, c, x0, y0);
        } else {
            filter_on_tensor_cores<D, Exact>(job, taps, hi, lo, c, x0, y0);
        }
        // A kept alpha: the input's own, copied with the tile's first channel.
        if (c == 0 && filtered < job.channels) {
            for (int k = static_cast<int>(threadIdx.x); k < kTileRows * kTileColumns;
                 k += kThreads) {
                const std::int64_t x = x0 + k % kTileColumns;
                const std::int64_t y = y0 + k / kTileColumns;
                if (x < job.dst_width && y < job.dst_height) copy_unfiltered<In>(job, x, y);
            }
        }
        // The next item's staging overwrites the tile.
        __syncthreads();
    }
}

// Calls f(kernel) for the job's column blocks, input depth and exactness.
template <int D, typename F>
void with_depth(const DeviceJob& job, F& f) {
    switch (job.in_depth) {
        case Depth::u8:
            if (exact_job(job)) f(dense_mma_kernel<D, std::uint8_t, true>);
            else f(dense_mma_kernel<D, std::uint8_t, false>);
            break;
        case Depth::u16: f(dense_mma_kernel<D, std::uint16_t, false>); break;
        case Depth::f32: f(dense_mma_kernel<D, float, false>); break;
    }
}
template <typename F>
bool with_kernel(int blocks, const DeviceJob& job, F&& f) {
    switch (blocks) {
        case 1: with_depth<1>(job, f); return true;
        case 2: with_depth<2>(job, f); return true;
        case 3: with_depth<3>(job, f); return true;
        case 4: with_depth<4>(job, f); return true;
        case 5: with_depth<5>(job, f); return true;
        default: return false;
    }
}

std::size_t shared_bytes_for(int blocks, const DeviceJob& job) {
    const bool exact = exact_job(job);
    switch (blocks) {
        case 1: return Geometry<1>::bytes(job.filter_height, exact);
        case 2: return Geometry<2>::bytes(job.filter_height, exact);
        case 3: return Geometry<3>::bytes(job.filter_height, exact);
        case 4: return Geometry<4>::bytes(job.filter_height, exact);
        default: return Geometry<5>::bytes(job.filter_height, exact);
    }
}

std::int64_t tiles_across(std::int64_t width) { return (width + kTileColumns - 1) / kTileColumns; }
std::int64_t tiles_down(std::int64_t height) { return (height + kTileRows - 1) / kTileRows; }

}  // namespace

float tf32_round(float v) {
    std::uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    bits = (bits + 0x1000u) & ~0x1fffu;  // half of the 13 dropped bits, then drop them
    float r;
    std::memcpy(&r, &bits, sizeof r);
    return r;
}

std::vector<float> dense_mma_tap_table(const std::vector<double>& taps, int width, int height) {
    const int stride = dense_mma_tap_stride(dense_mma_blocks(width));
    // hi and lo of tap (i, j), 0 past the filter.
    auto part = [&](int i, int j, int which) {
        if (j < 0 || j >= width) return 0.0f;
        const float f = static_cast<float>(taps[static_cast<std::size_t>(i) * width + j]);
        const float hi = tf32_round(f);
        return which == 0 ? hi : tf32_round(f - hi);
    };
    std::vector<float> table(4 * static_cast<std::size_t>(height) * stride);
    for (int i = 0; i < height; ++i) {
        for (int e = 0; e < stride; ++e) {
            const int j = e - kDenseTapPad;
            float* entry = &table[4 * (static_cast<std::size_t>(i) * stride + e)];
            entry[0] = part(i, j, 0);
            entry[1] = part(i, j + 4, 0);
            entry[2] = part(i, j, 1);
            entry[3] = part(i, j + 4, 1);
        }
    }
    return table;
}

std::string dense_mma_refusal(const Job& job) {
    const Filter& f = job.params.filter;
    if (f.width < 1 || f.height < 1 || f.width > kDenseMmaLargestSide ||
        f.height > kDenseMmaLargestSide) {
        return fmt::format("fast runs filters up to {0}x{0}; this one is {1}x{2}",
                           kDenseMmaLargestSide, f.width, f.height);
    }
    if (job.src.channels < 1 || job.src.channels > 4) {
        return fmt::format("fast runs 1 to 4 channels; this image has {}", job.src.channels);
    }
    for (double tap : f.taps) {
        if (!(std::abs(static_cast<float>(tap)) < kSplitLimit)) {
            return "fast's tensor cores take taps under 2^126 in magnitude";
        }
    }
    if (job.params.border == BorderMode::constant &&
        !(std::abs(static_cast<float>(job.params.border_value)) < kSplitLimit)) {
        return "fast's tensor cores take border values under 2^126 in magnitude";
    }
    const Size2D out = output_size(job.src.width, job.src.height, job.params);
    const std::int64_t items = tiles_across(std::max<std::int64_t>(out.width, 0)) *
                               tiles_down(std::max<std::int64_t>(out.height, 0)) *
                               job.filtered_channels();
    if (items > std::numeric_limits<int>::max() / 2) {
        return "the image has more tiles than fast can number";
    }
    return {};
}

bool dense_mma_preferred(const Job& job, bool other_paths_can_run) {
    if (!other_paths_can_run) return true;
    // The crossover with the tile path, measured on an H100, tiles against
    // this path, us:
    //  - f32 and gray u8 take the tiles at every side they run (up to
    //    15x15), at every size measured: 4000x3000 gray f32 15x15 134
    //    against 170, RGB f32 491 against 571, gray u8 158 against 165;
    //    780x585 gray u8 24 against 28;
    //  - colour u8 takes this path at 15x15 from kDenseMmaColourPixels:
    //    4000x3000 RGB 513 against 456, RGBA 709 against 594; 3000x2000
    //    RGB 279 against 257. Below it the tiles win (2000x1000 RGB 106
    //    against 114, 1500x1000 88 against 97, 780x585 40 against 52,
    //    RGBA 47 against 57), except 1000x1000 RGB (89 against 72). At
    //    13x13 the tiles win or tie at every size (4000x3000 RGB 397
    //    against 430).
    const Filter& f = job.params.filter;
    const int side = std::max(f.width, f.height);
    const bool colour_u8 = job.src.depth == Depth::u8 && job.src.channels > 1;
    const long long pixels = static_cast<long long>(job.src.width) * job.src.height;
    return colour_u8 && side >= 15 && pixels >= kDenseMmaColourPixels;
}

std::vector<TuningParam> dense_mma_tuning_params() {
    return {
        {"max_blocks", "the most CUDA blocks (default: as many as the device holds)", 1, 1 << 30}};
}

DenseMmaPath::DenseMmaPath(const Job& job, const DeviceJob& dj, int max_blocks,
                           cudaStream_t stream) {
    table_ = dense_mma_tap_table(job.params.filter.taps, dj.filter_width, dj.filter_height);
    CUDA_CHECK(cudaMemcpyToSymbolAsync(d_tap_table, table_.data(), table_.size() * sizeof(float), 0,
                                       cudaMemcpyHostToDevice, stream));
    blocks_ = dense_mma_blocks(dj.filter_width);
    shared_bytes_ = shared_bytes_for(blocks_, dj);
    std::int64_t resident = 1;
    const bool found = with_kernel(blocks_, dj, [&](auto kernel) {
        CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(shared_bytes_)));
        resident = resident_blocks(reinterpret_cast<const void*>(kernel), kThreads, shared_bytes_);
    });
    if (!found) throw CudaError("fast: no tensor-core kernel for this filter width");
    const std::int64_t items =
        tiles_across(dj.dst_width) * tiles_down(dj.dst_height) * dj.filtered_channels;
    grid_ = static_cast<int>(std::max<std::int64_t>(1, std::min(items, resident)));
    if (max_blocks > 0) grid_ = std::min(grid_, max_blocks);
}

void DenseMmaPath::launch(const DeviceJob& job, cudaStream_t stream) const {
    if (job.dst_width <= 0 || job.dst_height <= 0) return;
    Items items;
    items.tiles_across = static_cast<int>(tiles_across(job.dst_width));
    items.count = static_cast<int>(tiles_across(job.dst_width) * tiles_down(job.dst_height) *
                                   job.filtered_channels);
    with_kernel(blocks_, job, [&](auto kernel) {
        kernel<<<grid_, kThreads, shared_bytes_, stream>>>(job, items);
    });
}

}  // namespace cudaconv
