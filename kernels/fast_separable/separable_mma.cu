// fast-separable's tensor-core path: a rank-1 filter on a u8 image as two
// banded matrix products, on the tensor cores (mma.sync m16n8k16, fp16
// operands, fp32 accumulators), the column pass first.
//
// A warp owns 16 output rows of a tile and walks across it.
//  - The column pass makes the intermediate 16 rows by 8 pixels at a time:
//    a band matrix G (16 x 16 KB) with G[m][k] = column[k - m] times the
//    staged samples under it (16 KB rows x 8, read by ldmatrix.trans). Its
//    accumulators are, register for register, the B fragments the row pass
//    needs (the C layout of m16n8 holds row g, columns 2t and 2t + 1; the B
//    layout wants k = 2t, 2t + 1 at n = g), so the intermediate never
//    leaves the warp's registers: no planes of it in shared memory, no
//    barrier between the passes, and no halo rows filtered twice.
//  - The row pass makes 16 pixels by 8 rows at a time: a band matrix T
//    (16 x 16 KB) with T[m][k] = row[k - m + mma_row_shift] times the
//    intermediate's transpose (16 KB pixels x 8 rows), from the tiles the
//    warp just made. From the third pair of intermediate tiles on, each new
//    pair completes one such step, so a tile of the intermediate is made
//    once and used up to KB times.
// KB, the 16-sample blocks a pass multiplies, is 2 for sides up to 17 and 3
// up to 33. G and T depend only on the taps, so their fragments are built
// once on the host and each lane keeps its share in registers.
//
// Precision, the same as float arithmetic at the outputs' scale:
//  - u8 samples (and a whole u8 constant border value) are exact in fp16;
//  - each tap is split into hi + lo fp16 parts (hi = fp16(tap), lo =
//    fp16(tap - hi)), which carry it to about 2^-22, and both are multiplied;
//  - the float intermediate is split the same way before the row pass,
//    which multiplies hi * hi, lo * hi and hi * lo (lo * lo is below 2^-22);
//  - the column taps are scaled by a power of two so that the intermediate
//    stays within 2^15 (fp16 ends at 65504), the row taps so that their
//    largest lies in [2^10, 2^11) (their lo parts stay normal); the finish
//    undoes both exactly.
//
// Each block of 4 warps takes a tile of 64 rows by 64 pixels (sides_first_at:
// the columns at the image's sides first): it stages the tile and its halo as
// fp16 planes, one a channel (16 pixels at a time from 16-byte loads, byte
// by byte through the border policy past the row's ends); then each warp
// filters its 16 rows of every channel, and u8 outputs gather in an
// interleaved tile that goes out in 16-byte vectors.
#include "kernels/fast_separable/separable_mma.hpp"

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
#include "kernels/runtime/cuda_check.hpp"
#include "kernels/device/device_common.cuh"
#include "kernels/device/vector_store.cuh"

namespace cudaconv {
namespace {

constexpr int kMaxBlocksK = 3;  // sides up to 33
constexpr int kTileRows = 64;
constexpr int kTilePixels = 64;
constexpr int kWarps = kTileRows / 16;  // a warp's 16 rows
constexpr int kThreads = 32 * kWarps;
// Blocks an SM at least (__launch_bounds__), which caps registers. 3 hold
// RGB's 72 KB of shared memory and leave 168 registers a lane for the
// taps' 48 fragment words and the intermediate's tiles. At 4 (128
// registers, a few words spilled) gray with sides up to 17 took 45 us
// against 50 at 3 (4000x3000 gaussian:15, H100), but at side 31 gray loses
// 9% and RGB 7%. RGBA over 17, whose
// 95 KB leave room for 2 blocks only, takes 2, uncapped (sigma=5: 203.3
// against 204.4 us capped at 3).
template <int KB, int C>
CC_HD constexpr int min_blocks() {
    if constexpr (KB == 2 && C == 1) return 4;
    if constexpr (KB == 3 && C == 4) return 2;
    return 3;
}
// Whether the u8 finish takes one conversion instruction (saturated_u8):
// all kernels but the one at 4 blocks an SM, which lost to it.
template <int KB, int C>
CC_HD constexpr bool one_instruction_u8() {
    return !(KB == 2 && C == 1);
}

// A lane's fragment words (mma_fragments), as the device holds them: the 4
// registers of one A fragment (a pass, k-block and hi/lo part) together,
// lane-minor, so that a lane loads each fragment as one 16-byte vector and
// a warp's load is 4 coalesced 128-byte lines (MmaPath's constructor reorders them).
static_assert(kMmaPassWords == kMaxBlocksK * 2 * 4);
constexpr int kFragments = 2 * kMaxBlocksK * 2;  // (pass, k-block, part)
__device__ uint4 d_fragments[kFragments * 32];

// Shared-memory layout, in halves: the staged planes, then (u8 outputs) the
// output tile. Staged row s is input row y0 - radius + s; staged column q is
// pixel x0 - kStagedLeft + q, 16 pixels left of the tile whatever the
// radius, so that the staged columns of a row start on a 16-byte boundary
// (16 C bytes from the tile's) and are 6 whole 16-pixel items: 96 columns
// hold a tile and its halo for every side up to 33. Each staged row is
// padded by 8 halves (16 bytes) so that the 8 rows one ldmatrix phase reads
// (16 bytes each, at one column) fall on 8 different 16-byte bank groups: a
// stride of 208 bytes is distinct modulo 128 over 8 rows.
constexpr int kStagedLeft = 16;
template <int KB>
struct Geometry {
    static constexpr int kStagedRows = kTileRows + 16 * (KB - 1);
    static constexpr int kStagedColumns = kTilePixels + 2 * kStagedLeft;
    static constexpr int kItemsPerRow = kStagedColumns / 16;  // 16-pixel items, and pairs of tiles
    static constexpr int kStagedStride = kStagedColumns + 8;
    static constexpr int kPlaneHalves = kStagedRows * kStagedStride;
    CC_HD static constexpr std::size_t halves(int planes) {
        return static_cast<std::size_t>(planes) * kPlaneHalves;
    }
    // A u8 output tile, interleaved like the image, after the planes: its
    // rows go out as whole words.
    CC_HD static constexpr int out_stride(int channels) { return kTilePixels * channels + 16; }
    static constexpr std::size_t bytes(int planes, int channels, bool u8_out) {
        return sizeof(__half) * halves(planes) +
               (u8_out ? static_cast<std::size_t>(kTileRows) * out_stride(channels) : 0);
    }
};

// Four 8x8 matrices of halves, transposed; lane l gives the address of row
// l % 8 of matrix l / 8.
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], const __half* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(shared_address(p))
                 : "memory");
}

// d += a (16x16, row-major fragment) * b (16x8, column fragment).
// m16n8k16 needs compute capability 8.0 (mma_support refuses older
// GPUs), so a build for them compiles a trap in its place.
__device__ __forceinline__ void mma(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                    std::uint32_t b1) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
    __trap();
#endif
}

// Two u8 samples, bytes P0 and P1 of the words a, as an fp16 pair: each
// byte under the exponent of 1024 (0x6400 | b is 1024 + b exactly), less
// 1024. One PRMT places both bytes and the exponents where they share a
// word, else a PRMT and a LOP3.
template <int P0, int P1, int N>
__device__ __forceinline__ std::uint32_t u8_pair_to_half2(const std::uint32_t (&a)[N]) {
    std::uint32_t magic;
    if constexpr (P0 / 4 == P1 / 4) {
        constexpr unsigned kSelector = (P0 & 3) | (4 << 4) | ((P1 & 3) << 8) | (4 << 12);
        magic = __byte_perm(a[P0 / 4], 0x64646464u, kSelector);
    } else {
        const std::uint32_t t = __byte_perm(a[P0 / 4], a[P1 / 4], (P0 & 3) | ((4 + (P1 & 3)) << 8));
        magic = (t & 0x00ff00ffu) | 0x64006400u;
    }
    const __half2 v =
        __hsub2(*reinterpret_cast<const __half2*>(&magic), __half2half2(__ushort_as_half(0x6400)));
    return *reinterpret_cast<const std::uint32_t*>(&v);
}

// Channel `Channel` of the 16 pixels in the words a (16 C bytes,
// interleaved) as 16 fp16 values, to 32 bytes of its plane at `out`.
template <int C, int Channel, int... Pairs>
__device__ __forceinline__ void store_channel_of_16(const std::uint32_t (&a)[4 * C], __half* out,
                                                    std::integer_sequence<int, Pairs...>) {
    const std::uint32_t v[8] = {
        u8_pair_to_half2<(2 * Pairs) * C + Channel, (2 * Pairs + 1) * C + Channel>(a)...};
    reinterpret_cast<uint4*>(out)[0] = make_uint4(v[0], v[1], v[2], v[3]);
    reinterpret_cast<uint4*>(out)[1] = make_uint4(v[4], v[5], v[6], v[7]);
}

template <int C, int Channel = 0>
__device__ __forceinline__ void store_16_pixels(const std::uint32_t (&a)[4 * C], int filtered,
                                                __half* out, int plane_halves) {
    if constexpr (Channel < C) {
        // Only a 4-channel image may keep its last channel unfiltered.
        if (C != 4 || Channel < filtered) {
            store_channel_of_16<C, Channel>(a, out + Channel * plane_halves,
                                            std::make_integer_sequence<int, 8>{});
        }
        store_16_pixels<C, Channel + 1>(a, filtered, out, plane_halves);
    }
}

// border_index for a staged row or column p: border_index_near's closed
// forms (every tile's halo but those of images narrower than it), else
// border_index's general arithmetic, out of line. That 64-bit modulo
// arithmetic, inlined for every staged item at the image's sides, is 8% of
// the stall samples on gray 4000x3000 (ncu).
__device__ __forceinline__ std::int64_t border_near(BorderMode mode, std::int64_t p,
                                                    std::int64_t n) {
    const std::int64_t q = border_index_near(mode, p, n);
    return q == kBorderFar ? border_index_out_of_line(mode, p, n) : q;
}

// The 16 C bytes of 16 pixels of a row, as C 16-byte vectors.
template <int C>
struct ItemWords {
    uint4 v[C];
};

// 16 pixels of a row from pixel x on, some of them outside the row, through
// the border policy (the constant border: `constant`), as the 16 C bytes a
// vector load gives where they lie inside. Out of line: only items at the
// image's left and right sides take it (and every item of an image whose
// rows do not start on 16-byte boundaries).
template <int C>
__device__ __noinline__ ItemWords<C> gather_item(const DeviceJob& job, const std::uint8_t* row,
                                                 std::int64_t x, std::uint8_t constant) {
    alignas(16) std::uint8_t bytes[16 * C];
#pragma unroll
    for (int q = 0; q < 16; ++q) {
        const std::int64_t at = border_near(job.border, x + q, job.src_width);
#pragma unroll
        for (int c = 0; c < C; ++c) {
            bytes[q * C + c] = at == kBorderConstant ? constant : row[at * C + c];
        }
    }
    ItemWords<C> w;
#pragma unroll
    for (int k = 0; k < C; ++k) w.v[k] = reinterpret_cast<const uint4*>(bytes)[k];
    return w;
}

// Stages the filtered channels of input rows ys ... ys + kStagedRows - 1,
// pixels xs ... xs + kStagedColumns - 1, through the border policy, as fp16
// planes. Each item is 16 pixels of a staged row: where they lie inside the
// row, C aligned 16-byte loads (xs C is a multiple of 16, as the tile's
// first byte is); elsewhere gather_item. Rows above or below the image are
// the border policy's rows, and a constant border's rows are words of the
// border value (a whole u8, as mma_take requires). Each channel's 16
// samples go to its plane as two 16-byte stores; every byte's place is a
// compile-time constant. A thread has the loads of up to 6 / C items in
// flight together. Every staged sample is a finite value (the taps past
// the filter are zeros, and 0 * Inf would be NaN).
template <int KB, int C>
__device__ __forceinline__ void stage_tile(const DeviceJob& job, int filtered, __half* staged,
                                           std::int64_t xs, std::int64_t ys) {
    using G = Geometry<KB>;
    constexpr int kGroups = G::kItemsPerRow;
    constexpr int kItems = G::kStagedRows * kGroups;
    constexpr int kPerThread = (kItems + kThreads - 1) / kThreads;
    // A whole u8 (mma_take) where the border is constant.
    const auto constant = job.border == BorderMode::constant
                              ? static_cast<std::uint8_t>(job.border_value)
                              : std::uint8_t{0};
    const std::uint32_t border_word = 0x01010101u * constant;
    // Vector loads need rows that start on 16-byte boundaries. Device
    // images are pitched, so theirs do; a job whose rows did not would
    // gather every item, slower but the same.
    const bool aligned =
        ((reinterpret_cast<std::uintptr_t>(job.src) | static_cast<std::uintptr_t>(job.src_pitch)) &
         15) == 0;
    // Items a batch, their loads in flight together: at most 24 registers
    // of them (twice that spilled on 3 and 4 channels).
    constexpr int kBatch = 6 / C < kPerThread ? 6 / C : kPerThread;
#pragma unroll 1
    for (int n0 = 0; n0 < kPerThread; n0 += kBatch) {
        uint4 w[kBatch][C];
#pragma unroll
        for (int n = 0; n < kBatch; ++n) {
            const int item = static_cast<int>(threadIdx.x) + (n0 + n) * kThreads;
            if (item < kItems) {
                const int r = item / kGroups;
                const int j = item - r * kGroups;
                const std::int64_t y = border_near(job.border, ys + r, job.src_height);
                const std::int64_t x = xs + 16 * j;
                if (y == kBorderConstant) {
#pragma unroll
                    for (int k = 0; k < C; ++k) {
                        w[n][k] = make_uint4(border_word, border_word, border_word, border_word);
                    }
                    continue;
                }
                const auto* row =
                    reinterpret_cast<const std::uint8_t*>(job.src + y * job.src_pitch);
                if (aligned && x >= 0 && x + 16 <= job.src_width) {
                    const auto* vectors = reinterpret_cast<const uint4*>(row + x * C);
#pragma unroll
                    for (int k = 0; k < C; ++k) w[n][k] = __ldg(vectors + k);
                } else {
                    const ItemWords<C> gathered = gather_item<C>(job, row, x, constant);
#pragma unroll
                    for (int k = 0; k < C; ++k) w[n][k] = gathered.v[k];
                }
            }
        }
#pragma unroll
        for (int n = 0; n < kBatch; ++n) {
            const int item = static_cast<int>(threadIdx.x) + (n0 + n) * kThreads;
            if (item < kItems) {
                const int r = item / kGroups;
                const int j = item - r * kGroups;
                std::uint32_t a[4 * C];
#pragma unroll
                for (int k = 0; k < C; ++k) {
                    a[4 * k] = w[n][k].x;
                    a[4 * k + 1] = w[n][k].y;
                    a[4 * k + 2] = w[n][k].z;
                    a[4 * k + 3] = w[n][k].w;
                }
                store_16_pixels<C>(a, filtered, staged + r * G::kStagedStride + 16 * j,
                                   G::kPlaneHalves);
            }
        }
    }
}

// An intermediate tile's accumulators (16 rows by 8 pixels, the m16n8 C
// layout) as the row pass's B fragments, hi and lo parts: part[h] holds row
// g + 8 h at pixels 2t and 2t + 1, which is register h of the layout's
// b0 (pixels 0-7 of a k-block) or b1 (pixels 8-15) for rows 8 h ... 8 h + 7.
__device__ __forceinline__ void split_tile(const float (&acc)[4], std::uint32_t (&hi)[2],
                                           std::uint32_t (&lo)[2]) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const float v0 = acc[2 * h];
        const float v1 = acc[2 * h + 1];
        const __half2 high = __floats2half2_rn(v0, v1);
        const float2 back = __half22float2(high);
        const __half2 low = __floats2half2_rn(v0 - back.x, v1 - back.y);
        hi[h] = *reinterpret_cast<const std::uint32_t*>(&high);
        lo[h] = *reinterpret_cast<const std::uint32_t*>(&low);
    }
}

// One channel's 16 output rows r0 ... r0 + 15 of the tile, by one warp.
//  - Pair p of intermediate tiles: staged columns 16 p ... 16 p + 15 of rows
//    r0 ... r0 + 15, from staged rows r0 ... r0 + 16 KB - 1 (KB products a
//    tile and hi/lo part). Output row r reads staged rows r ... r + 2 radius.
//  - Step u of the row pass: output pixels 16 u ... 16 u + 15, from the
//    2 KB intermediate tiles from mma_first_tile (0, or 1 for KB = 2, whose
//    radius is at most 8) on: tile t is staged columns 8 t ... 8 t + 7, and
//    the row taps are shifted to match (mma_row_shift). Its last tile is in
//    pair u + 2, so it runs as soon as that pair is made.
// finish(u, sums) takes a step's sums: sums[h][i] is output row r0 + 8 h +
// 2t + (i & 1), pixel 16 u + g + 8 (i >> 1) (the m16n8 C layout, with the
// pixels down and the rows across).
template <int KB, typename Finish>
__device__ __forceinline__ void filter_rows(const __half* plane, int r0,
                                            const std::uint32_t (&column_a)[KB][2][4],
                                            const std::uint32_t (&row_a)[KB][2][4],
                                            Finish&& finish) {
    using G = Geometry<KB>;
    constexpr int kPairs = G::kItemsPerRow;
    constexpr int kFirstTile = mma_first_tile(KB);
    constexpr int kLag = 2;  // pairs made before the first step
    static_assert(kFirstTile + 2 * KB <= 2 * (kLag + 1),
                  "a step's tiles lie in its pair and those before");
    static_assert(kPairs - kLag == kTilePixels / 16, "a step for every 16 pixels of the tile");
    const int lane = static_cast<int>(threadIdx.x) & 31;
    // ldmatrix.trans matrices: staged rows 0-7 and 8-15 of a k-block at the
    // pair's first 8 pixels, then the same at its next 8 (B fragments of
    // the pair's two tiles).
    const __half* source =
        plane + (r0 + ((lane >> 3) & 1) * 8 + (lane & 7)) * G::kStagedStride + (lane >> 4) * 8;
    std::uint32_t mid_hi[2 * kPairs][2];
    std::uint32_t mid_lo[2 * kPairs][2];
#pragma unroll
    for (int p = 0; p < kPairs; ++p) {
        // [tile][tap part]: four independent chains of KB products.
        float acc[2][2][4] = {};
#pragma unroll
        for (int j = 0; j < KB; ++j) {
            std::uint32_t b[4];
            ldmatrix_x4_trans(b, source + 16 * j * G::kStagedStride + 16 * p);
#pragma unroll
            for (int part = 0; part < 2; ++part) {
                mma(acc[0][part], column_a[j][part], b[0], b[1]);
                mma(acc[1][part], column_a[j][part], b[2], b[3]);
            }
        }
#pragma unroll
        for (int e = 0; e < 2; ++e) {
            float v[4];
#pragma unroll
            for (int i = 0; i < 4; ++i) v[i] = acc[e][0][i] + acc[e][1][i];
            split_tile(v, mid_hi[2 * p + e], mid_lo[2 * p + e]);
        }
        const int u = p - kLag;
        if (u >= 0) {
            // [row half][hi * hi, lo taps * hi, hi taps * lo]: six
            // independent chains of KB products.
            float sums[2][3][4] = {};
#pragma unroll
            for (int j = 0; j < KB; ++j) {
                const int tile = 2 * (u + j) + kFirstTile;
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    mma(sums[h][0], row_a[j][0], mid_hi[tile][h], mid_hi[tile + 1][h]);
                    mma(sums[h][1], row_a[j][1], mid_hi[tile][h], mid_hi[tile + 1][h]);
                    mma(sums[h][2], row_a[j][0], mid_lo[tile][h], mid_lo[tile + 1][h]);
                }
            }
            float out[2][4];
#pragma unroll
            for (int h = 0; h < 2; ++h) {
#pragma unroll
                for (int i = 0; i < 4; ++i) {
                    out[h][i] = sums[h][0][i] + (sums[h][1][i] + sums[h][2][i]);
                }
            }
            finish(u, out);
        }
    }
}

// v rounded half to even and saturated to 0 ... 255, NaN to 0. One
// conversion instruction (Convert) makes RGB u8 sigma=5 2% faster than
// to_output's __float2uint_rn and min (H100, 88.7 against 90.4 us), but
// gray with sides up to 17 (the kernel at 4 blocks an SM) 5% slower (42.7
// against 40.5), so that kernel keeps the two.
template <bool Convert>
__device__ __forceinline__ std::uint8_t saturated_u8(float v) {
    if constexpr (Convert) {
        unsigned short b;
        asm("cvt.rni.sat.u8.f32 %0, %1;" : "=h"(b) : "f"(v));
        return static_cast<std::uint8_t>(b);
    } else {
        return to_output<std::uint8_t>(v);
    }
}

// An output that is not u8, to the image. Out of line: filter_rows's
// finish is inlined 32 times a channel.
__device__ __noinline__ void store_wide(const DeviceJob& job, std::int64_t x, std::int64_t y, int c,
                                        float value) {
    if (x < job.dst_width && y < job.dst_height) store_output(job, x, y, c, value);
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
    const std::uintptr_t alignment = reinterpret_cast<std::uintptr_t>(first_row) |
                                     static_cast<std::uintptr_t>(job.dst_pitch);
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
__global__ void __launch_bounds__(kThreads, min_blocks<KB, C>())
    separable_mma_kernel(const __grid_constant__ DeviceJob job, int tiles_across, int tiles,
                         float scale) {
    using G = Geometry<KB>;
    extern __shared__ __align__(16) unsigned char smem[];
    const int filtered = job.filtered_channels;
    __half* staged = reinterpret_cast<__half*>(smem);
    std::uint8_t* out_tile =
        job.out_depth == Depth::u8 ? smem + sizeof(__half) * G::halves(filtered) : nullptr;

    const int lane = static_cast<int>(threadIdx.x) & 31;
    const int r0 = 16 * (static_cast<int>(threadIdx.x) >> 5);  // this warp's rows of a tile
    const int g = lane >> 2;
    const int t = lane & 3;
    std::uint32_t column_a[KB][2][4];
    std::uint32_t row_a[KB][2][4];
#pragma unroll
    for (int j = 0; j < KB; ++j) {
#pragma unroll
        for (int part = 0; part < 2; ++part) {
            const uint4 c = d_fragments[(j * 2 + part) * 32 + lane];
            const uint4 r = d_fragments[((kMaxBlocksK + j) * 2 + part) * 32 + lane];
            column_a[j][part][0] = c.x;
            column_a[j][part][1] = c.y;
            column_a[j][part][2] = c.z;
            column_a[j][part][3] = c.w;
            row_a[j][part][0] = r.x;
            row_a[j][part][1] = r.y;
            row_a[j][part][2] = r.z;
            row_a[j][part][3] = r.w;
        }
    }

    const int radius = job.filter_width / 2;
    const std::uint32_t abs_mask = job.take_abs ? 0x7fffffffu : 0xffffffffu;
    constexpr bool kConvert = one_instruction_u8<KB, C>();
    for (int tile = static_cast<int>(blockIdx.x); tile < tiles;
         tile += static_cast<int>(gridDim.x)) {
        const int2 at = sides_first_at(tile, tiles_across, tiles / tiles_across);
        const int tx = at.x;
        const int ty = at.y;
        const std::int64_t x0 = static_cast<std::int64_t>(tx) * kTilePixels;
        const std::int64_t y0 = static_cast<std::int64_t>(ty) * kTileRows;
        // The previous tile's last reads of the staged planes were before
        // the barrier that ends its filtering.
        stage_tile<KB, C>(job, filtered, staged, x0 - kStagedLeft, y0 - radius);
        __syncthreads();
        for (int c = 0; c < filtered; ++c) {
            const __half* plane = staged + c * G::kPlaneHalves;
            if (out_tile != nullptr) {
                // finish_value and saturate_to<u8> with no branch per
                // output: |v| as a mask, and cvt's rounding half to even
                // with negatives and NaN to 0.
                std::uint8_t* out = out_tile + (r0 + 2 * t) * G::out_stride(C) + g * C + c;
                filter_rows<KB>(plane, r0, column_a, row_a, [&](int u, const float(&sums)[2][4]) {
#pragma unroll
                    for (int h = 0; h < 2; ++h) {
#pragma unroll
                        for (int i = 0; i < 4; ++i) {
                            const float v = __uint_as_float(
                                __float_as_uint(scale * sums[h][i] + job.delta) & abs_mask);
                            const int at =
                                (8 * h + (i & 1)) * G::out_stride(C) + (16 * u + 8 * (i >> 1)) * C;
                            out[at] = saturated_u8<kConvert>(v);
                        }
                    }
                });
            } else {
                filter_rows<KB>(plane, r0, column_a, row_a, [&](int u, const float(&sums)[2][4]) {
#pragma unroll
                    for (int h = 0; h < 2; ++h) {
#pragma unroll
                        for (int i = 0; i < 4; ++i) {
                            const int row = r0 + 8 * h + 2 * t + (i & 1);
                            const int column = 16 * u + g + 8 * (i >> 1);
                            store_wide(job, x0 + column, y0 + row, c,
                                       finish_value(sums[h][i], scale, job.delta, job.take_abs));
                        }
                    }
                });
            }
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
        // Every warp is done with the staged planes (the next tile stages
        // into them) and with the output tile.
        __syncthreads();
        // The next tile's warps write the output tile again only after the
        // barrier after its staging.
        if (out_tile != nullptr) store_out_tile<KB, C>(job, out_tile, x0, y0);
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

std::int64_t tiles_of(const DeviceJob& job, std::int64_t* across = nullptr) {
    const std::int64_t x = (job.dst_width + kTilePixels - 1) / kTilePixels;
    if (across) *across = x;
    return x * ((job.dst_height + kTileRows - 1) / kTileRows);
}

}  // namespace

MmaTapScales mma_tap_scales(const Rank1Filter& f) {
    MmaTapScales s;
    double column_sum = 0.0;
    for (double v : f.column) column_sum += std::abs(v);
    double row_max = 0.0;
    for (double v : f.row) row_max = std::max(row_max, std::abs(v));
    if (column_sum > 0.0) {
        s.column_exp = static_cast<int>(std::floor(std::log2(32768.0 / (255.0 * column_sum))));
        while (255.0 * std::ldexp(column_sum, s.column_exp) > 32768.0) --s.column_exp;
    }
    if (row_max > 0.0) s.row_exp = 10 - std::ilogb(row_max);
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

// The mma.m16n8k16 A layout of the PTX ISA: lane = 4 g + t; register r
// holds row g + 8 (r & 1), columns 2t + 8 (r >> 1) and the next, lower half
// first. Both passes' band matrices are A operands: block j of G is
// G[m][k] = column[16 j + k - m], of T is T[m][k] = row[16 j + k - m +
// mma_row_shift(side)].
std::vector<std::uint32_t> mma_fragments(const Rank1Filter& f, const MmaTapScales& s) {
    const int side = static_cast<int>(f.row.size());
    const int shift = mma_row_shift(side);
    auto tap = [side](const std::vector<double>& taps, int exp, int i, int part) -> std::uint32_t {
        if (i < 0 || i >= side) return 0;
        return half_part(std::ldexp(taps[static_cast<std::size_t>(i)], exp), part);
    };
    std::vector<std::uint32_t> words(2 * kMmaPassWords * 32, 0);
    for (int lane = 0; lane < 32; ++lane) {
        const int g = lane >> 2;
        const int t = lane & 3;
        for (int j = 0; j < kMaxBlocksK; ++j) {
            for (int part = 0; part < 2; ++part) {
                for (int reg = 0; reg < 4; ++reg) {
                    const int m = g + 8 * (reg & 1);
                    const int i = 16 * j + 2 * t + 8 * (reg >> 1) - m;
                    words[mma_column_word(j, part, reg) * 32 + lane] =
                        tap(f.column, s.column_exp, i, part) |
                        tap(f.column, s.column_exp, i + 1, part) << 16;
                    words[mma_row_word(j, part, reg) * 32 + lane] =
                        tap(f.row, s.row_exp, i + shift, part) |
                        tap(f.row, s.row_exp, i + shift + 1, part) << 16;
                }
            }
        }
    }
    return words;
}

bool mma_take(const Job& job, const DeviceJob& dj) {
    const int side = dj.filter_width;
    const int largest_side = 16 * (kMaxBlocksK - 1) + 1;
    if (dj.filter_height != side || side % 2 == 0 || side > largest_side) return false;
    if (dj.origin_x != -(side / 2) || dj.origin_y != -(side / 2)) return false;
    if (dj.in_depth != Depth::u8 || dj.border == BorderMode::valid) return false;
    if (dj.channels < 1 || dj.channels > 4) return false;
    if (!border_fits_u8(dj.border, dj.border_value)) return false;
    // Tile indices are ints, and tile + gridDim.x must stay one.
    if (tiles_of(dj) > std::numeric_limits<int>::max() / 2) return false;
    const auto factors = separate(job.params.filter);
    if (!factors) return false;
    // The undoing of the taps' scaling must be a normal float.
    const MmaTapScales s = mma_tap_scales(*factors);
    return std::abs(s.row_exp + s.column_exp) < 120;
}

std::size_t mma_shared_bytes(const DeviceJob& dj) {
    const bool u8_out = dj.out_depth == Depth::u8;
    return mma_blocks_k(dj.filter_width) == 2
               ? Geometry<2>::bytes(dj.filtered_channels, dj.channels, u8_out)
               : Geometry<3>::bytes(dj.filtered_channels, dj.channels, u8_out);
}

MmaPath::MmaPath(const Job& job, const DeviceJob& dj, int max_blocks, cudaStream_t stream) {
    const auto factors = separate(job.params.filter);
    if (!factors) throw CudaError("fast-separable: the filter is not rank 1");
    const MmaTapScales s = mma_tap_scales(*factors);
    unscale_ = static_cast<float>(std::ldexp(1.0, -(s.row_exp + s.column_exp)));
    // mma_fragments' word-major order to d_fragments' (fragment, lane, register).
    const std::vector<std::uint32_t> words = mma_fragments(*factors, s);
    fragments_.assign(words.size(), 0);
    for (int fragment = 0; fragment < kFragments; ++fragment) {
        for (int lane = 0; lane < 32; ++lane) {
            for (int reg = 0; reg < 4; ++reg) {
                fragments_[(fragment * 32 + lane) * 4 + reg] =
                    words[(fragment * 4 + reg) * 32 + lane];
            }
        }
    }
    CUDA_CHECK(cudaMemcpyToSymbolAsync(d_fragments, fragments_.data(),
                                       fragments_.size() * sizeof(std::uint32_t), 0,
                                       cudaMemcpyHostToDevice, stream));

    blocks_k_ = mma_blocks_k(dj.filter_width);
    shared_bytes_ = mma_shared_bytes(dj);
    const bool found = with_kernel(blocks_k_, dj.channels, [&](auto kernel) {
        CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(shared_bytes_)));
    });
    if (!found) throw CudaError("fast-separable: no tensor-core kernel for this job");
    // A block a tile, so that the block scheduler gives the next tile to
    // whichever block finishes first: tiles differ in cost (the sides'
    // gathered items), and a persistent grid of as many blocks as the SMs
    // hold, each walking every grid-th tile, keeps SMs idle a quarter of the
    // time at its end (ncu: 154.7 K active cycles of 202.4 K) and is 10%
    // slower (H200, RGB u8 sigma=5: 102.8 against 92.0 us).
    grid_ = static_cast<int>(std::max<std::int64_t>(1, tiles_of(dj)));
    if (max_blocks > 0) grid_ = std::min(grid_, max_blocks);
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
