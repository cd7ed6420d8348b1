// fast-separable's tensor-core path: a rank-1 filter on a u8 image as two
// banded matrix products, on the tensor cores (mma.sync m16n8k16, fp16
// operands, fp32 accumulators).
//
// The row pass of 16 rows by 16 outputs is In (16 x 16 KB staged samples)
// times a band matrix T (16 KB x 16) with T[k][n] = row[k - n]; the column
// pass of 16 outputs down by 8 across is a band matrix G (16 x 16 KB) with
// G[m][k] = column[k - m] times the intermediate (16 KB rows x 8). KB, the
// 16-sample blocks a pass multiplies, is 2 for sides up to 17 and 3 up to
// 33. T and G depend only on the taps, so their fragments are built once on
// the host; a block keeps G's in registers and T's in shared memory, and
// loads the image's side of each product from shared memory (ldmatrix).
//
// Precision, the same as float arithmetic at the outputs' scale:
//  - u8 samples (and a whole u8 constant border value) are exact in fp16;
//  - each tap is split into hi + lo fp16 parts (hi = fp16(tap), lo =
//    fp16(tap - hi)), which carry it to about 2^-22, and both are multiplied;
//  - the float intermediate is split the same way before the column pass,
//    which multiplies hi * hi, lo * hi and hi * lo (lo * lo is below 2^-22);
//  - the row taps are scaled by a power of two so that the intermediate
//    stays within 2^15 (fp16 ends at 65504), the column taps so that their
//    largest lies in [2^10, 2^11) (their lo parts stay normal); the
//    epilogue undoes both exactly.
//
// Each block walks tiles of 64 rows by 64 pixels (a persistent grid): it
// stages the tile and its halo as fp16 planes, one a channel (from aligned
// words where the tile's columns lie inside the image, sample by sample
// through the border policy at its sides), then for each channel runs the
// row pass over the staged rows into the intermediate's hi and lo planes
// and the column pass from them; u8 outputs gather in an interleaved tile
// that goes out in 16-byte vectors. The row pass repeats the 16 (KB - 1)
// halo rows a tile (a quarter to a half more of it); in exchange a tile
// needs no ring and a block no state between tiles.
#include "kernels/separable_mma.hpp"

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string_view>
#include <utility>

#include "filters/rank1.hpp"
#include "kernels/cuda_backend.hpp"
#include "kernels/cuda_check.hpp"
#include "kernels/device_common.cuh"

namespace cudaconv {
namespace {

constexpr int kMaxBlocksK = 3;  // sides up to 33
constexpr int kTileRows = 64;
constexpr int kTilePixels = 64;
constexpr int kWarps = 8;
constexpr int kThreads = 32 * kWarps;

// Fragment words a lane needs, as the host builds them (mma_fragments):
// stored word-major, lane-minor, so a warp's load of one word is one
// coalesced 128-byte line.
static_assert(kMmaRowWords == kMaxBlocksK * 2 * 2 * 2 && kMmaColumnWords == kMaxBlocksK * 2 * 4);
constexpr int kFragmentWords = (kMmaRowWords + kMmaColumnWords) * 32;
__device__ std::uint32_t d_fragments[kFragmentWords];

// The row pass's B fragments live in shared memory, not registers (held
// with the column pass's they took 48 registers and spilled): a uint2 (both
// registers of one k-block, n half and part) per lane.
constexpr int kRowFragmentPairs = kMaxBlocksK * 2 * 2;
constexpr std::size_t kRowFragmentBytes = kRowFragmentPairs * 32 * sizeof(uint2);

// Shared-memory layout, in halves. Each staged plane row and intermediate
// row is padded by 8 halves (16 bytes) so that the 8 rows one ldmatrix phase
// reads (16 bytes each, at one column) fall on 8 different 16-byte bank
// groups: strides of 208, 176 and 144 bytes are distinct modulo 128 over 8
// rows.
template <int KB>
struct Geometry {
    static constexpr int kHalo = 16 * (KB - 1);  // staged beyond the tile, rows and columns
    static constexpr int kStagedRows = kTileRows + kHalo;
    static constexpr int kStagedColumns = kTilePixels + kHalo;
    static constexpr int kStagedStride = kStagedColumns + 8;
    static constexpr int kMidStride = kTilePixels + 8;
    // The row pass's tap fragments come first (kRowFragmentBytes), then
    // the staged planes, the intermediate's two planes and the output tile.
    CC_HD static constexpr std::size_t halves(int planes) {
        return kRowFragmentBytes / sizeof(__half) +
               static_cast<std::size_t>(planes) * kStagedRows * kStagedStride +
               2 * static_cast<std::size_t>(kStagedRows) * kMidStride;
    }
    // A u8 output tile, interleaved like the image, after the halves: its
    // rows go out as whole words.
    CC_HD static constexpr int out_stride(int channels) { return kTilePixels * channels + 16; }
    static constexpr std::size_t bytes(int planes, int channels, bool u8_out) {
        return sizeof(__half) * halves(planes) +
               (u8_out ? static_cast<std::size_t>(kTileRows) * out_stride(channels) : 0);
    }
};

__device__ __forceinline__ std::uint32_t shared_address(const void* p) {
    return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// Four 8x8 matrices of halves; lane l gives the address of row l % 8 of
// matrix l / 8.
__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], const __half* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(shared_address(p))
                 : "memory");
}
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], const __half* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(shared_address(p))
                 : "memory");
}

// d += a (16x16, row-major fragment) * b (16x8, column fragment).
__device__ __forceinline__ void mma(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                    std::uint32_t b1) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Stages the filtered channels of input rows ys ... ys + kStagedRows - 1,
// pixels xs ... xs + kStagedColumns - 1, through the border policy, as fp16
// planes. Every staged sample is a finite value (the taps past the filter
// are zeros, and 0 * Inf would be NaN).
template <int KB, int C>
__device__ __forceinline__ void stage_tile(const DeviceJob& job, int filtered, __half* staged,
                                           std::int64_t xs, std::int64_t ys) {
    using G = Geometry<KB>;
    constexpr int kSpan = G::kStagedColumns * C;  // samples of a staged row
    constexpr int kPerLane = (kSpan + 31) / 32;
    const int lane = static_cast<int>(threadIdx.x) & 31;
    const int warp = static_cast<int>(threadIdx.x) >> 5;
    const __half border_value = __float2half_rn(job.border_value);
    for (int r = warp; r < G::kStagedRows; r += kWarps) {
        std::int64_t y = ys + r;
        if (y < 0 || y >= job.src_height) y = border_index(job.border, y, job.src_height);
        const std::uint8_t* row =
            y == kBorderConstant
                ? nullptr
                : reinterpret_cast<const std::uint8_t*>(job.src + y * job.src_pitch);
#pragma unroll
        for (int i = 0; i < kPerLane; ++i) {
            const int k = lane + 32 * i;
            const int p = k / C;
            const int c = k - p * C;
            if (k < kSpan && c < filtered) {
                __half v = border_value;
                if (row != nullptr) {
                    std::int64_t x = xs + p;
                    if (x < 0 || x >= job.src_width) x = border_index(job.border, x, job.src_width);
                    if (x != kBorderConstant) v = __ushort2half_rn(__ldg(row + x * C + c));
                }
                staged[(c * G::kStagedRows + r) * G::kStagedStride + p] = v;
            }
        }
    }
}

// Two u8 samples, bytes p0 and p1 of the words a, as an fp16 pair: each
// byte under the exponent of 1024 (0x6400 | b is 1024 + b exactly), less
// 1024.
template <int P0, int P1, int N>
__device__ __forceinline__ std::uint32_t u8_pair_to_half2(const std::uint32_t (&a)[N]) {
    const std::uint32_t t =
        __byte_perm(a[P0 / 4], a[P1 / 4], (P0 & 3) | ((4 + (P1 & 3)) << 8));
    const std::uint32_t magic = (t & 0x00ff00ffu) | 0x64006400u;
    const __half2 v = __hsub2(*reinterpret_cast<const __half2*>(&magic),
                              __half2half2(__ushort_as_half(0x6400)));
    return *reinterpret_cast<const std::uint32_t*>(&v);
}

// The four pixels' samples of one channel (of the 4 C interleaved bytes
// of a) as four fp16 values.
template <int C, int Channel>
__device__ __forceinline__ uint2 channel_of_four(const std::uint32_t (&a)[C]) {
    return make_uint2(u8_pair_to_half2<Channel, Channel + C>(a),
                      u8_pair_to_half2<Channel + 2 * C, Channel + 3 * C>(a));
}

template <int C, int Channel = 0>
__device__ __forceinline__ void store_four_pixels(const std::uint32_t (&a)[C], int filtered,
                                                  __half* out, int plane_halves) {
    if constexpr (Channel < C) {
        if (Channel < filtered) {
            *reinterpret_cast<uint2*>(out + Channel * plane_halves) =
                channel_of_four<C, Channel>(a);
        }
        store_four_pixels<C, Channel + 1>(a, filtered, out, plane_halves);
    }
}

// Stages a tile whose staged columns, and every word read, lie within the
// image's rows (is_interior_across): rows above or below the image are the
// border policy's rows, and a constant border's rows are words of the
// border value (a whole u8, as mma_take requires). Each item is 4 pixels of
// a staged row (4 C bytes): its C + 1 aligned words are loaded, shifted by
// the span's offset within a word into the 4 C bytes, and each channel's 4
// samples go to its plane as one 8-byte store. Every byte's place is a
// compile-time constant. kUnroll items a thread have their loads in flight
// together (3: 12 words at 4 channels, without spilling now that the row
// fragments live in shared memory).
template <int KB, int C>
__device__ __forceinline__ void stage_interior(const DeviceJob& job, int filtered, __half* staged,
                                               std::int64_t xs, std::int64_t ys) {
    using G = Geometry<KB>;
    constexpr int kGroups = G::kStagedColumns / 4;  // 4-pixel items a staged row
    constexpr int kItems = G::kStagedRows * kGroups;
    constexpr int kPerThread = (kItems + kThreads - 1) / kThreads;
    constexpr int kUnroll = 3;
    constexpr int kPlaneHalves = G::kStagedRows * G::kStagedStride;
    const std::int64_t first_byte = xs * C;
    const int skip = static_cast<int>(first_byte & 3);  // bytes of the first word before the span
    const unsigned shift = 8u * static_cast<unsigned>(skip);
    const std::uint8_t* base =
        reinterpret_cast<const std::uint8_t*>(job.src) + (first_byte - skip);
    const std::uint32_t border_word =
        job.border == BorderMode::constant
            ? 0x01010101u * static_cast<std::uint32_t>(job.border_value)
            : 0u;
    for (int n0 = 0; n0 < kPerThread; n0 += kUnroll) {
        std::uint32_t w[kUnroll][C + 1];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
            const int item = static_cast<int>(threadIdx.x) + (n0 + u) * kThreads;
            if (item < kItems) {
                const int r = item / kGroups;
                const int j = item - r * kGroups;
                std::int64_t y = ys + r;
                if (y < 0 || y >= job.src_height) y = border_index(job.border, y, job.src_height);
                const std::uint32_t* words =
                    reinterpret_cast<const std::uint32_t*>(base + y * job.src_pitch + 4 * j * C);
#pragma unroll
                for (int k = 0; k <= C; ++k) {
                    w[u][k] = y == kBorderConstant ? border_word : __ldg(words + k);
                }
            }
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
            const int item = static_cast<int>(threadIdx.x) + (n0 + u) * kThreads;
            if (item < kItems) {
                const int r = item / kGroups;
                const int j = item - r * kGroups;
                std::uint32_t a[C];
#pragma unroll
                for (int k = 0; k < C; ++k) a[k] = __funnelshift_r(w[u][k], w[u][k + 1], shift);
                store_four_pixels<C>(a, filtered, staged + r * G::kStagedStride + 4 * j,
                                     kPlaneHalves);
            }
        }
    }
}

// Whether stage_interior can stage the tile whose staged columns start at
// xs: the same answer for every thread of the block.
template <int KB, int C>
__device__ __forceinline__ bool is_interior_across(const DeviceJob& job, std::int64_t xs) {
    using G = Geometry<KB>;
    // The last item's last word ends at most 4 bytes past the span.
    const std::int64_t end = xs * C + G::kStagedColumns * C + 4;
    const std::uintptr_t alignment =
        reinterpret_cast<std::uintptr_t>(job.src) | static_cast<std::uintptr_t>(job.src_pitch);
    return xs >= 0 && end <= job.src_width * C && (alignment & 3) == 0;
}

// The row pass of one channel: intermediate rows 0 ... kStagedRows - 1 of
// the tile's kTilePixels columns, as hi and lo fp16 planes. Intermediate
// (r, n) = sum over i of row[i] * staged (r, n + i).
template <int KB>
__device__ __forceinline__ void row_pass(const __half* plane, __half* mid_hi, __half* mid_lo,
                                         const uint2* b) {
    using G = Geometry<KB>;
    constexpr int kGroupsAcross = kTilePixels / 16;
    constexpr int kGroups = (G::kStagedRows / 16) * kGroupsAcross;
    const int lane = static_cast<int>(threadIdx.x) & 31;
    const int warp = static_cast<int>(threadIdx.x) >> 5;
    const int g = lane >> 2;
    const int t = lane & 3;
    for (int group = warp; group < kGroups; group += kWarps) {
        const int m0 = group / kGroupsAcross * 16;
        const int n0 = group % kGroupsAcross * 16;
        // Separate accumulators for the hi and lo taps and each 8 outputs:
        // four independent chains of KB products.
        float acc[2][2][4] = {};
#pragma unroll
        for (int j = 0; j < KB; ++j) {
            std::uint32_t a[4];
            ldmatrix_x4(a, plane + (m0 + (lane & 15)) * G::kStagedStride + n0 + 16 * j +
                               (lane >> 4) * 8);
#pragma unroll
            for (int h = 0; h < 2; ++h) {
#pragma unroll
                for (int part = 0; part < 2; ++part) {
                    const uint2 f = b[((j * 2 + h) * 2 + part) * 32 + lane];
                    mma(acc[h][part], a, f.x, f.y);
                }
            }
        }
#pragma unroll
        for (int h = 0; h < 2; ++h) {
#pragma unroll
            for (int half = 0; half < 2; ++half) {
                const float v0 = acc[h][0][2 * half] + acc[h][1][2 * half];
                const float v1 = acc[h][0][2 * half + 1] + acc[h][1][2 * half + 1];
                const __half2 hi = __floats2half2_rn(v0, v1);
                const float2 back = __half22float2(hi);
                const __half2 lo = __floats2half2_rn(v0 - back.x, v1 - back.y);
                const int at = (m0 + g + 8 * half) * G::kMidStride + n0 + 8 * h + 2 * t;
                *reinterpret_cast<__half2*>(mid_hi + at) = hi;
                *reinterpret_cast<__half2*>(mid_lo + at) = lo;
            }
        }
    }
}

// The column pass of channel c: the tile's outputs, finished and stored.
// Output (m, n) = sum over i of column[i] * intermediate (m + i, n).
// u8 outputs (out_tile not null) go into the tile, interleaved; the others
// straight to the image.
template <int KB, int C>
__device__ __forceinline__ void column_pass(const DeviceJob& job, const __half* mid_hi,
                                            const __half* mid_lo,
                                            const std::uint32_t (&a)[KB][2][4], int c,
                                            std::int64_t x0, std::int64_t y0, float scale,
                                            std::uint8_t* out_tile) {
    using G = Geometry<KB>;
    constexpr int kGroupsAcross = kTilePixels / 8;
    constexpr int kGroups = (kTileRows / 16) * kGroupsAcross;
    const int lane = static_cast<int>(threadIdx.x) & 31;
    const int warp = static_cast<int>(threadIdx.x) >> 5;
    const int g = lane >> 2;
    const int t = lane & 3;
    // ldmatrix.trans matrices: intermediate hi rows 0-7 and 8-15 of a
    // k-block, then lo rows 0-7 and 8-15 (B fragments hi and lo).
    const __half* source =
        (lane < 16 ? mid_hi : mid_lo) + (((lane >> 3) & 1) * 8 + (lane & 7)) * G::kMidStride;
    for (int group = warp; group < kGroups; group += kWarps) {
        const int m0 = group / kGroupsAcross * 16;
        const int n0 = group % kGroupsAcross * 8;
        float acc[3][4] = {};  // hi * hi, lo * hi, hi * lo: three chains
#pragma unroll
        for (int j = 0; j < KB; ++j) {
            std::uint32_t b[4];
            ldmatrix_x4_trans(b, source + (m0 + 16 * j) * G::kMidStride + n0);
            mma(acc[0], a[j][0], b[0], b[1]);
            mma(acc[1], a[j][1], b[0], b[1]);
            mma(acc[2], a[j][0], b[2], b[3]);
        }
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int row = m0 + g + (i >= 2 ? 8 : 0);
            const int column = n0 + 2 * t + (i & 1);
            const float sum = acc[0][i] + (acc[1][i] + acc[2][i]);
            const float value = finish_value(sum, scale, job.delta, job.take_abs);
            if (out_tile != nullptr) {
                // Rounds half to even; negatives and NaN give 0 (PTX cvt).
                out_tile[row * G::out_stride(C) + column * C + c] =
                    static_cast<std::uint8_t>(min(__float2uint_rn(value), 255u));
            } else if (x0 + column < job.dst_width && y0 + row < job.dst_height) {
                store_output(job, x0 + column, y0 + row, c, value);
            }
        }
    }
}

// The u8 output tile to the image, a warp a row: whole words where the
// row's part is word-aligned in memory (always, for pitched device images),
// bytes otherwise and for the odd bytes at the right edge.
template <int KB, int C>
__device__ __forceinline__ void store_out_tile(const DeviceJob& job, const std::uint8_t* out_tile,
                                               std::int64_t x0, std::int64_t y0) {
    using G = Geometry<KB>;
    const int lane = static_cast<int>(threadIdx.x) & 31;
    const int warp = static_cast<int>(threadIdx.x) >> 5;
    const std::int64_t pixels_left = job.dst_width - x0;
    const std::int64_t rows_left = job.dst_height - y0;
    const int pixels = static_cast<int>(pixels_left < kTilePixels ? pixels_left : kTilePixels);
    const int rows = static_cast<int>(rows_left < kTileRows ? rows_left : kTileRows);
    const int bytes = pixels * C;
    std::uint8_t* first_row =
        reinterpret_cast<std::uint8_t*>(job.dst + y0 * job.dst_pitch) + x0 * C;
    const std::uintptr_t alignment =
        reinterpret_cast<std::uintptr_t>(first_row) | static_cast<std::uintptr_t>(job.dst_pitch);
    if (pixels == kTilePixels && rows == kTileRows && (alignment & 15) == 0) {
        constexpr int kVectorsPerRow = kTilePixels * C / 16;
        for (int v = static_cast<int>(threadIdx.x); v < kTileRows * kVectorsPerRow; v += kThreads) {
            const int r = v / kVectorsPerRow;
            const int k = v - r * kVectorsPerRow;
            *reinterpret_cast<uint4*>(first_row + r * job.dst_pitch + 16 * k) =
                *reinterpret_cast<const uint4*>(out_tile + r * G::out_stride(C) + 16 * k);
        }
        return;
    }
    for (int r = warp; r < rows; r += kWarps) {
        std::uint8_t* out = first_row + r * job.dst_pitch;
        const std::uint8_t* in = out_tile + r * G::out_stride(C);
        const int words = (reinterpret_cast<std::uintptr_t>(out) & 3) == 0 ? bytes / 4 : 0;
        for (int w = lane; w < words; w += 32) {
            reinterpret_cast<std::uint32_t*>(out)[w] =
                reinterpret_cast<const std::uint32_t*>(in)[w];
        }
        for (int b = 4 * words + lane; b < bytes; b += 32) out[b] = in[b];
    }
}

template <int KB, int C>
__global__ void __launch_bounds__(kThreads, 2)
    separable_mma_kernel(DeviceJob job, int tiles_across, int tiles, float scale) {
    using G = Geometry<KB>;
    extern __shared__ __align__(16) unsigned char smem[];
    const int filtered = job.filtered_channels;
    uint2* row_b = reinterpret_cast<uint2*>(smem);
    __half* staged = reinterpret_cast<__half*>(smem + kRowFragmentBytes);
    __half* mid_hi = staged + filtered * G::kStagedRows * G::kStagedStride;
    __half* mid_lo = mid_hi + G::kStagedRows * G::kMidStride;
    std::uint8_t* out_tile = job.out_depth == Depth::u8
                                 ? smem + sizeof(__half) * G::halves(filtered)
                                 : nullptr;

    const int lane = static_cast<int>(threadIdx.x) & 31;
    // The row fragments to shared memory (read after the barrier that
    // follows the first tile's staging).
    for (int i = static_cast<int>(threadIdx.x); i < kRowFragmentPairs * 32; i += kThreads) {
        const int pair = i / 32;  // (j * 2 + h) * 2 + part
        const int l = i % 32;
        row_b[i] =
            make_uint2(d_fragments[(pair * 2) * 32 + l], d_fragments[(pair * 2 + 1) * 32 + l]);
    }
    std::uint32_t column_a[KB][2][4];
#pragma unroll
    for (int j = 0; j < KB; ++j) {
#pragma unroll
        for (int part = 0; part < 2; ++part) {
#pragma unroll
            for (int reg = 0; reg < 4; ++reg) {
                column_a[j][part][reg] = d_fragments[mma_column_word(j, part, reg) * 32 + lane];
            }
        }
    }

    const int radius = job.filter_width / 2;
    for (int tile = static_cast<int>(blockIdx.x); tile < tiles;
         tile += static_cast<int>(gridDim.x)) {
        const int ty = tile / tiles_across;
        const int tx = tile - ty * tiles_across;
        const std::int64_t x0 = static_cast<std::int64_t>(tx) * kTilePixels;
        const std::int64_t y0 = static_cast<std::int64_t>(ty) * kTileRows;
        // The previous tile's last reads of the staged planes were before
        // the barrier after its last row pass.
        if (is_interior_across<KB, C>(job, x0 - radius)) {
            stage_interior<KB, C>(job, filtered, staged, x0 - radius, y0 - radius);
        } else {
            stage_tile<KB, C>(job, filtered, staged, x0 - radius, y0 - radius);
        }
        __syncthreads();
        for (int c = 0; c < filtered; ++c) {
            row_pass<KB>(staged + c * G::kStagedRows * G::kStagedStride, mid_hi, mid_lo, row_b);
            __syncthreads();
            column_pass<KB, C>(job, mid_hi, mid_lo, column_a, c, x0, y0, scale, out_tile);
            // The next channel's row pass overwrites the intermediate (the
            // next tile's waits at the barrier after its staging).
            if (c + 1 < filtered) __syncthreads();
        }
        // A kept alpha: the input's own.
        for (int c = filtered; c < C; ++c) {
            for (int i = static_cast<int>(threadIdx.x); i < kTileRows * kTilePixels;
                 i += kThreads) {
                const int column = i % kTilePixels;
                const int row = i / kTilePixels;
                const std::int64_t x = x0 + column;
                const std::int64_t y = y0 + row;
                if (x < job.dst_width && y < job.dst_height) {
                    const float alpha =
                        load_raw<std::uint8_t>(job, x + job.centre_x, y + job.centre_y, c);
                    if (out_tile != nullptr) {
                        out_tile[row * G::out_stride(C) + column * C + c] =
                            saturate_to<std::uint8_t>(alpha);
                    } else {
                        store_output(job, x, y, c, alpha);
                    }
                }
            }
        }
        if (out_tile != nullptr) {
            __syncthreads();
            store_out_tile<KB, C>(job, out_tile, x0, y0);
            // The next tile's column passes write the tile again only after
            // the barriers after its staging and row pass.
        }
    }
}

// Calls f(kernel) for the job's k-blocks and channel count; false when none
// is instantiated.
template <int KB, typename F, int... Cs>
bool with_channels(int channels, F& f, std::integer_sequence<int, Cs...>) {
    return ((channels == Cs && (f(separable_mma_kernel<KB, Cs>), true)) || ...);
}
template <typename F>
bool with_kernel(int blocks_k, int channels, F&& f) {
    using Channels = std::integer_sequence<int, 1, 2, 3, 4>;
    if (blocks_k == 2) return with_channels<2>(channels, f, Channels{});
    if (blocks_k == 3) return with_channels<3>(channels, f, Channels{});
    return false;
}

int blocks_k_for(int side) { return side <= 17 ? 2 : 3; }

std::int64_t tiles_of(const DeviceJob& job, std::int64_t* across = nullptr) {
    const std::int64_t x = (job.dst_width + kTilePixels - 1) / kTilePixels;
    if (across) *across = x;
    return x * ((job.dst_height + kTileRows - 1) / kTileRows);
}

bool mma_enabled() {
    const char* text = std::getenv("CUDACONV_FAST_SEPARABLE_MMA");
    return text == nullptr || std::string_view(text) != "0";
}

}  // namespace

MmaTapScales mma_tap_scales(const Rank1Filter& f) {
    MmaTapScales s;
    double row_sum = 0.0;
    for (double v : f.row) row_sum += std::abs(v);
    double column_max = 0.0;
    for (double v : f.column) column_max = std::max(column_max, std::abs(v));
    if (row_sum > 0.0) {
        s.row_exp = static_cast<int>(std::floor(std::log2(32768.0 / (255.0 * row_sum))));
        while (255.0 * std::ldexp(row_sum, s.row_exp) > 32768.0) --s.row_exp;
    }
    if (column_max > 0.0) s.column_exp = 10 - std::ilogb(column_max);
    return s;
}

namespace {

// The fp16 bits of v's hi part (part 0) or lo part (part 1).
std::uint16_t half_part(double v, int part) {
    const __half hi = __float2half_rn(static_cast<float>(v));
    const double rest = v - static_cast<double>(__half2float(hi));
    const __half h = part == 0 ? hi : __float2half_rn(static_cast<float>(rest));
    std::uint16_t bits;
    std::memcpy(&bits, &h, sizeof bits);
    return bits;
}

}  // namespace

// The mma.m16n8k16 layouts of the PTX ISA: lane = 4 g + t; B register r
// holds k = 2t + 8r and 2t + 8r + 1 of column n = g; A register r holds row
// g + 8 (r & 1), columns 2t + 8 (r >> 1) and the next. Lower half first.
std::vector<std::uint32_t> mma_fragments(const Rank1Filter& f, const MmaTapScales& s) {
    const int side = static_cast<int>(f.row.size());
    auto tap = [side](const std::vector<double>& taps, int exp, int i, int part) -> std::uint32_t {
        if (i < 0 || i >= side) return 0;
        return half_part(std::ldexp(taps[static_cast<std::size_t>(i)], exp), part);
    };
    std::vector<std::uint32_t> words(kFragmentWords, 0);
    for (int lane = 0; lane < 32; ++lane) {
        const int g = lane >> 2;
        const int t = lane & 3;
        for (int j = 0; j < kMaxBlocksK; ++j) {
            for (int part = 0; part < 2; ++part) {
                for (int h = 0; h < 2; ++h) {
                    for (int reg = 0; reg < 2; ++reg) {
                        const int i = 16 * j + 2 * t + 8 * reg - 8 * h - g;
                        words[mma_row_word(j, h, part, reg) * 32 + lane] =
                            tap(f.row, s.row_exp, i, part) |
                            tap(f.row, s.row_exp, i + 1, part) << 16;
                    }
                }
                for (int reg = 0; reg < 4; ++reg) {
                    const int m = g + 8 * (reg & 1);
                    const int i = 16 * j + 2 * t + 8 * (reg >> 1) - m;
                    words[mma_column_word(j, part, reg) * 32 + lane] =
                        tap(f.column, s.column_exp, i, part) |
                        tap(f.column, s.column_exp, i + 1, part) << 16;
                }
            }
        }
    }
    return words;
}

bool mma_take(const Job& job, const DeviceJob& dj) {
    if (!mma_enabled()) return false;
    const int side = dj.filter_width;
    const int largest_side = 16 * (kMaxBlocksK - 1) + 1;
    if (dj.filter_height != side || side % 2 == 0 || side > largest_side) return false;
    if (dj.origin_x != -(side / 2) || dj.origin_y != -(side / 2)) return false;
    if (dj.in_depth != Depth::u8 || dj.border == BorderMode::valid) return false;
    if (dj.channels < 1 || dj.channels > 4) return false;
    if (!border_fits_u8(dj.border, dj.border_value)) return false;
    if (tiles_of(dj) > std::numeric_limits<int>::max() / 2) return false;
    const auto factors = separate(job.params.filter);
    if (!factors) return false;
    // The undoing of the taps' scaling must be a normal float.
    const MmaTapScales s = mma_tap_scales(*factors);
    return std::abs(s.row_exp + s.column_exp) < 120;
}

std::size_t mma_shared_bytes(const DeviceJob& dj) {
    const bool u8_out = dj.out_depth == Depth::u8;
    return blocks_k_for(dj.filter_width) == 2
               ? Geometry<2>::bytes(dj.filtered_channels, dj.channels, u8_out)
               : Geometry<3>::bytes(dj.filtered_channels, dj.channels, u8_out);
}

void MmaPath::prepare(const Job& job, const DeviceJob& dj, cudaStream_t stream) {
    const auto factors = separate(job.params.filter);
    if (!factors) throw CudaError("fast-separable: the filter is not rank 1");
    const MmaTapScales s = mma_tap_scales(*factors);
    unscale_ = static_cast<float>(std::ldexp(1.0, -(s.row_exp + s.column_exp)));
    fragments_ = mma_fragments(*factors, s);
    CUDA_CHECK(cudaMemcpyToSymbolAsync(d_fragments, fragments_.data(),
                                       fragments_.size() * sizeof(std::uint32_t), 0,
                                       cudaMemcpyHostToDevice, stream));

    blocks_k_ = blocks_k_for(dj.filter_width);
    shared_bytes_ = mma_shared_bytes(dj);
    int per_sm = 1;
    const bool found = with_kernel(blocks_k_, dj.channels, [&](auto kernel) {
        CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(shared_bytes_)));
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads,
                                                                 shared_bytes_));
    });
    if (!found) throw CudaError("fast-separable: no tensor-core kernel for this job");
    const std::int64_t resident =
        static_cast<std::int64_t>(std::max(1, per_sm)) *
        std::max(1, current_device().multiprocessors);
    grid_ = static_cast<int>(std::max<std::int64_t>(1, std::min(tiles_of(dj), resident)));
    // Fewer blocks, for the tests: each then walks many tiles.
    if (const char* blocks = std::getenv("CUDACONV_FAST_SEPARABLE_BLOCKS")) {
        if (const int n = std::atoi(blocks); n > 0) grid_ = std::min(grid_, n);
    }
}

void MmaPath::launch(const DeviceJob& job, cudaStream_t stream) const {
    std::int64_t across = 0;
    const int tiles = static_cast<int>(tiles_of(job, &across));
    with_kernel(blocks_k_, job.channels, [&](auto kernel) {
        // The job's scale times the undoing of the taps' scaling: a power
        // of two, so the product is exact.
        kernel<<<grid_, kThreads, shared_bytes_, stream>>>(job, static_cast<int>(across), tiles,
                                                           job.scale * unscale_);
    });
}

}  // namespace cudaconv
