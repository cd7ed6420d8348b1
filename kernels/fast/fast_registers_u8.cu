// fast's register path for u8 images (1, 3 or 4 channels, every one
// filtered) under a 3x3 filter of integer taps summed as they are
// (kernels/fast/fast_registers.hpp says which jobs): each warp walks a band of
// the image 32 16-byte vectors (512 bytes) wide and a few rows down, in
// blocks of R = 4 output rows, with no block-wide barriers.
//  - A band of 2 blocks (the default's 8 rows) inside the image loads all
//    its rows straight into registers at once (16-byte loads), stores
//    them into the warp's ring of rows in shared memory, and only then
//    sums: those registers are free again by the first sum. Other bands
//    copy the next two blocks' rows into the ring (cp.async) while the
//    current block is summed.
//  - The image's bottom rows (half a wave of resident warps' worth on
//    large images, all of a small image's: registers_u8_tail_rows says
//    when and why) go to a second launch, the tail walk: bands of one
//    block, whose warps take the first walk's places on the SMs as its
//    last warps end (programmatic dependent launch), so that the job ends
//    on short bands rather than on a last wave of long ones.
//  - A block's R + 2 input rows are read out of the ring into registers,
//    a vector and the words either side of it a lane, and its R output
//    rows are summed from them at once by DP4A (kernels/device/dp4a.cuh): each
//    input row's bytes under the filter's 3 columns are gathered into a
//    word once (gather_word), for the 1 to 3 output rows that read them.
//    No ring of accumulator rows, the strip path's (which pins its u8
//    kernels at 96 registers and walks a row at a time).
//  - Every lane copies its vector whole; the bytes that outputs read
//    outside the row (C before it, C after its end) are written over by
//    the side columns' warps through the border policy (patch_ring_rows),
//    from the ring row itself where the policy takes them from the warp's
//    own bytes of the row.
// Why it is built so (H100, u8 edge, against the other ways of doing it
// measured in one call each):
//  - Against the strip path, which walks a row at a time: gray 4000x3000
//    16.3 us against 19.0, 780x585 8.8 against 18.2; RGB 780x585 9.7
//    against 14.8, 3000x2000 20.4 against 26.1.
//  - Rows loaded into registers rather than copied by cp.async: RGB
//    4000x3000 32.9 us against 34.6, 8000x6000 104.6 against 116.6. The
//    memory pattern alone (a probe in git history) takes 28.9 us
//    through registers, 31.2 through cp.async, and a copy 28.6. Rows by
//    the tensor memory accelerator are no faster at 4000x3000 and 9%
//    slower at 780x585.
//  - A grid of bands, side columns first: a resident grid of warps each
//    walking a run of blocks takes RGB 4000x3000 in 43.3 us against 36.3,
//    bands taken from an atomic counter 38.5 against 34.9, bands in plain
//    row order 36.6 against 34.8.
//  - Loads of one band overlapping sums of another: one block a warp (as
//    gray f32 3x3 goes, kernels/fast/fast_registers.cu) has its loads, sums and
//    stores in turn, and with 80 registers a lane DRAM waits while the
//    warps sum (ncu: 0.40 instructions issued a scheduler a cycle, DRAM at
//    34%; 42.3 us).
// The kernel's speed moves with its code's layout: summing the two blocks
// in straight-line code, inlining the patches or issuing the copies after
// the sums each cost 1.5 to 3 us at 4000x3000, with fewer instructions.
// Judge a change to it side by side with the build before (scripts/gpu/ab.sh).
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/device/border_columns.cuh"
#include "kernels/runtime/cuda_backend.hpp"
#include "kernels/runtime/cuda_check.hpp"
#include "kernels/device/device_common.cuh"
#include "kernels/device/dp4a.cuh"
#include "kernels/fast/fast_registers.hpp"
#include "kernels/fast/fast_strips.hpp"

namespace cudaconv {
namespace {

// Filter row j's 3 taps as the signed bytes of word j (strips_dp4a_words'
// group 0).
__constant__ int c_dp4a_rows[3];

constexpr int kRows = 4;  // output rows a block (R)

// u8 blocks: every lane holds 6 words of each input row, bytes k - 4 ...
// k + 19 (its 16-byte vector and a word each side), enough for 3x3 on 1,
// 3 or 4 channels (a pixel's neighbours are at most 4 bytes away).
constexpr int kWindowWords = 6;

// Output word g's 4 samples' gathers from one input row's window w (byte
// k - 4 + b in word b / 4): packed[s] holds bytes x - C, x, x + C of
// output byte x = 4 g + s, as gather_bytes<C> would (byte 3 whatever: its
// tap is 0). On 3 and 4 channels a sample's bytes span 3 words, which
// gather_bytes takes 2 PRMTs for; here a word of the bytes that two
// samples share is gathered once, so RGB takes 5 PRMTs a word, not 6, and
// RGBA 6, not 8.
template <int C>
__device__ __forceinline__ void gather_word(const unsigned int (&w)[kWindowWords], int g,
                                            unsigned int (&packed)[4]) {
    const unsigned int a = w[g], b = w[g + 1], c = w[g + 2];
    if constexpr (C == 3) {  // sample s: bytes 4 g + 1 + s, + 3, + 6
        const unsigned int shared = __byte_perm(b, c, 0x5421);  // b1 b2 c0 c1
        packed[0] = __byte_perm(a, b, 0x0741);                  // a1 b0 b3
        packed[1] = __byte_perm(a, shared, 0x0642);             // a2 b1 c0
        packed[2] = __byte_perm(a, shared, 0x0753);             // a3 b2 c1
        packed[3] = __byte_perm(b, c, 0x0630);                  // b0 b3 c2
    } else if constexpr (C == 4) {                              // sample s: byte s of a, b and c
        const unsigned int low = __byte_perm(a, b, 0x5140);     // a0 b0 a1 b1
        const unsigned int high = __byte_perm(a, b, 0x7362);    // a2 b2 a3 b3
        packed[0] = __byte_perm(low, c, 0x0410);
        packed[1] = __byte_perm(low, c, 0x0532);
        packed[2] = __byte_perm(high, c, 0x0610);
        packed[3] = __byte_perm(high, c, 0x0732);
    } else {
#pragma unroll
        for (int s = 0; s < 4; ++s) packed[s] = gather_bytes<C>(w, 4 + 4 * g + s - C, 3);
    }
}

// Output rows [y0, y0 + R) of bytes [k, k + 16) of this lane into out[o][g]
// (bytes 4 g ... 4 g + 3 of row y0 + o), from win[i] (input row y0 - 1 +
// i's window, byte k - 4 + b in word b / 4): for each output word, each
// input row's bytes under the filter's 3 columns are gathered once into a
// word a sample and summed by DP4A into the 1 to 3 output rows that read
// that input row. Integers as they are (scale 1, delta 0), made absolute
// where the job asks (TakeAbs: a template parameter, so that no branch
// splits the groups' sums apart), clamped into bytes.
template <int R, int C, bool TakeAbs>
__device__ __forceinline__ void sum_u8_block(const unsigned int (&win)[R + 2][kWindowWords],
                                             unsigned int (&out)[R][4]) {
#pragma unroll
    for (int g = 0; g < 4; ++g) {
        int acc[R][4];
#pragma unroll
        for (int o = 0; o < R; ++o) {
#pragma unroll
            for (int s = 0; s < 4; ++s) acc[o][s] = 0;
        }
#pragma unroll
        for (int i = 0; i < R + 2; ++i) {
            unsigned int packed[4];  // bytes x - C, x, x + C of output byte x = 4 g + s
            gather_word<C>(win[i], g, packed);
#pragma unroll
            for (int o = 0; o < R; ++o) {
                if (o > i || i - o > 2) continue;  // resolved at compile time
                const int taps = c_dp4a_rows[i - o];
#pragma unroll
                for (int s = 0; s < 4; ++s) acc[o][s] = dp4a_u8_s8(packed[s], taps, acc[o][s]);
            }
        }
#pragma unroll
        for (int o = 0; o < R; ++o) {
#pragma unroll
            for (int s = 0; s < 4; ++s) {
                if (TakeAbs) acc[o][s] = abs(acc[o][s]);
            }
            out[o][g] = pack_saturated_u8(acc[o][0], acc[o][1], acc[o][2], acc[o][3]);
        }
    }
}

// out's rows into the image at `at` (row y0's byte k), `pitch` apart: a
// 16-byte store a row where the lane's vector lies in the row
// (bytes_left = row_bytes - k >= 16), its first bytes_left bytes where the
// row ends inside it, nothing past the row's end; rows from rows_left on
// (past the image's bottom) not at all.
template <int R>
__device__ __forceinline__ void store_u8_rows(const unsigned int (&out)[R][4], std::byte* at,
                                              std::int64_t pitch, int bytes_left, int rows_left) {
    if (bytes_left <= 0) return;
    if (bytes_left >= 16) {
#pragma unroll
        for (int o = 0; o < R; ++o) {
            if (o < rows_left) {  // predicated stores, no branches
                *reinterpret_cast<uint4*>(at + o * pitch) =
                    make_uint4(out[o][0], out[o][1], out[o][2], out[o][3]);
            }
        }
        return;
    }
#pragma unroll
    for (int o = 0; o < R; ++o) {
        if (o >= rows_left) return;
#pragma unroll
        for (int b = 0; b < 16; ++b) {  // unrolled: out stays in registers
            if (b < bytes_left)
                at[o * pitch + b] = static_cast<std::byte>(out[o][b / 4] >> (8 * (b % 4)));
        }
    }
}

// Warps a CUDA block: 2 and 1 (at as many warps an SM) are within 2% of 4
// either way on an H100.
constexpr int kWalkWarps = 4;
constexpr int kRingRows = 16;  // 3 R + 2 rows at R = 4: the block's and the next two's
// A ring row: the warp's 512 bytes at 16, the word before them at 12 and
// the word after at 528.
constexpr int kRingRowBytes = 16 + 512 + 16;
constexpr int kRingData = 16;  // where byte k of the warp's first lane lies in a ring row

// The bytes outside the row that outputs read, into the N ring slots from
// `slot` on (image rows top, top + 1, ...) of a warp at column `column`:
// the C before the row (column 0) and the C after its end, where they fall
// in the warp's ring row, through the border policy. The lanes copy their
// vectors whole (past the row's end, the row's padding); a warp at the
// side then writes these few bytes over. Where every byte they take lies
// in the warp's own 512 bytes of the row (reflect, reflect101 and
// replicate, unless the row ends within a pixel or two of the warp's
// first byte), it takes them from the ring row, already there (RGB u8
// edge on an H100: 780x585 9.6 us against 10.4 from global memory,
// 4000x3000 35.6 against 36.1), a byte a lane of the warp (Lanes 32), or
// lane 0 all of them (Lanes 1: the caller says why). Else lane 0 takes
// them from global memory, all rows' loads in flight together. Called by
// those lanes, out of line: only the warps at the image's sides take it.
template <int C, int N, int Lanes>
__device__ __noinline__ void patch_ring_rows(const DeviceJob& job,
                                             unsigned char (*ring)[kRingRowBytes], int slot,
                                             std::int64_t top, int column, int lane) {
    const int row_bytes = static_cast<int>(job.src_width) * C;
    const int base = column * 512;  // the row's byte at the ring row's kRingData
    // A patch reaches one pixel past either end: the closed forms hold on
    // rows of 2 pixels and more (this asks more), border_index on the rest.
    const bool near = job.src_width > 2 * C;
    const unsigned int constant = static_cast<unsigned int>(job.border_value);
    int sources[2 * C];  // the row byte each patch takes, -1: the constant border
    int offsets[2 * C];  // where it goes in the ring row, -1: nowhere
#pragma unroll
    for (int t = 0; t < C; ++t) {
        const int before = -C + t, after = row_bytes + t;
        offsets[t] = column == 0 ? kRingData + before : -1;
        sources[t] = rebuilt_sample<C>(job, before, near);
        const int at = kRingData + after - base;
        offsets[C + t] = at >= kRingData - 4 && at < kRingData + 512 + 4 ? at : -1;
        sources[C + t] = rebuilt_sample<C>(job, after, near);
    }
    bool in_ring = true;  // every patch's source lies in the warp's 512 bytes of the row
#pragma unroll
    for (int t = 0; t < 2 * C; ++t) {
        const bool mine = sources[t] >= base && sources[t] < base + 512;  // and < row_bytes
        if (offsets[t] >= 0 && sources[t] >= 0 && !mine) in_ring = false;
    }
    if (in_ring) {
        // Patch t of ring row i a lane (Lanes 32). Rows outside the image
        // came in through the border policy (the constant border as a
        // splat), so the sources in them are right too. No lane writes a
        // byte another reads: the sources lie in the row, the patches
        // outside it. Lane 0 alone, one byte after another, has the side
        // columns' warps live 10 us against the others' 6 (a trace of
        // 4000x3000 RGB edge on an H100).
        if constexpr (Lanes == 1) {
#pragma unroll
            for (int i = 0; i < N; ++i) {
                unsigned char* row = ring[(slot + i) % kRingRows];
#pragma unroll
                for (int t = 0; t < 2 * C; ++t) {
                    if (offsets[t] < 0) continue;
                    row[offsets[t]] = sources[t] < 0 ? static_cast<unsigned char>(constant)
                                                     : row[kRingData + sources[t] - base];
                }
            }
        } else {
#pragma unroll
            for (int first = 0; first < N * 2 * C; first += Lanes) {
                const int item = first + lane;
                if (item >= N * 2 * C) break;
                const int i = item / (2 * C), t = item % (2 * C);
                int offset = -1, source = 0;
                // Not sources[t]: that indexing would go to local memory.
#pragma unroll
                for (int u = 0; u < 2 * C; ++u) {
                    if (u == t) offset = offsets[u], source = sources[u];
                }
                if (offset < 0) continue;
                unsigned char* row = ring[(slot + i) % kRingRows];
                row[offset] = source < 0 ? static_cast<unsigned char>(constant)
                                         : row[kRingData + source - base];
            }
        }
        return;
    }
    if (lane != 0) return;
    unsigned int values[N][2 * C];
#pragma unroll
    for (int i = 0; i < N; ++i) {
        const std::int64_t y = image_row(job, top + i);
        const std::uint8_t* row =
            y == kBorderConstant
                ? nullptr
                : reinterpret_cast<const std::uint8_t*>(job.src + y * job.src_pitch);
#pragma unroll
        for (int t = 0; t < 2 * C; ++t) {
            values[i][t] = row == nullptr || sources[t] < 0 ? constant : __ldg(row + sources[t]);
        }
    }
#pragma unroll
    for (int i = 0; i < N; ++i) {
#pragma unroll
        for (int t = 0; t < 2 * C; ++t) {
            if (offsets[t] >= 0)
                ring[(slot + i) % kRingRows][offsets[t]] = static_cast<unsigned char>(values[i][t]);
        }
    }
}

// A block's R + 2 input rows, ring slots first ... first + R + 1 (mod the
// ring), into the lanes' windows: each lane's vector and the words either
// side of it, all read from the ring row (lane 0's word before and lane
// 31's after lie there too). Three loads a row, where shuffles and picking
// out lanes 0 and 31 take seven instructions: with the stores below
// (predicated, a pointer moved on a block) RGB u8 edge 4000x3000 takes
// 30.9 us against 31.4, gray 14.0 against 14.3 on an H100. Either change
// alone is slower on one of them: the kernel's speed moves with its code's
// layout.
template <int R>
__device__ __forceinline__ void read_window(const unsigned char (*ring)[kRingRowBytes], int first,
                                            int lane, unsigned int (&win)[R + 2][kWindowWords]) {
#pragma unroll
    for (int i = 0; i < R + 2; ++i) {
        const unsigned char* at = ring[(first + i) % kRingRows] + kRingData + 16 * lane;
        const uint4 v = *reinterpret_cast<const uint4*>(at);
        win[i][1] = v.x, win[i][2] = v.y, win[i][3] = v.z, win[i][4] = v.w;
        win[i][0] = *reinterpret_cast<const unsigned int*>(at - 4);
        win[i][5] = *reinterpret_cast<const unsigned int*>(at + 16);
    }
}

// The common band's rows: Blocks blocks (Blocks R rows: 2 in the walk of
// whole bands, 1 in the tail walk), every row it reads inside the image.
// All its Blocks R + 2 rows are loaded straight into registers at once
// (16-byte loads; lane 0's word before its vector and lane 31's after, one
// load a row) and stored into ring slots 0 ... Blocks R + 1 before any sum,
// so that those registers are free again by then. Loads into registers
// rather than cp.async: the walk's memory pattern alone takes 28.9 us
// against 31.2 (docs/PERFORMANCE.md).
template <int R, int Blocks>
__device__ __forceinline__ void load_full_band(const DeviceJob& job,
                                               unsigned char (*ring)[kRingRowBytes], int lane,
                                               int k, int row_bytes, std::int64_t y0) {
    constexpr int kIn = Blocks * R + 2;
    const bool copies_vector = k < row_bytes;
    const int side_offset = lane == 0 ? -4 : 16;  // from the lane's vector
    const bool copies_side = (lane == 0 && k >= 4) || (lane == 31 && k + 16 < row_bytes);
    const std::int64_t pitch = job.src_pitch;
    // Row pointers stepped a pitch a row rather than each row's address
    // multiplied out afresh (`from + r * pitch`): RGB u8 edge 4000x3000
    // 30.6 us against 30.8, gray 13.7 against 14.0 on an H100.
    const std::byte* vector_row = job.src + (y0 - 1) * pitch + k;
    const std::byte* side_row = vector_row + side_offset;
    uint4 vectors[kIn];
    unsigned int sides[kIn];
#pragma unroll
    for (int r = 0; r < kIn; ++r) {
        vectors[r] = make_uint4(0, 0, 0, 0);
        sides[r] = 0;
        if (copies_vector) vectors[r] = __ldg(reinterpret_cast<const uint4*>(vector_row));
        if (copies_side) sides[r] = __ldg(reinterpret_cast<const unsigned int*>(side_row));
        vector_row += pitch;
        side_row += pitch;
    }
    unsigned char* vector_at = ring[0] + kRingData + 16 * lane;
    unsigned char* side_at = ring[0] + kRingData + (lane == 0 ? -4 : 512);
#pragma unroll
    for (int r = 0; r < kIn; ++r) {
        *reinterpret_cast<uint4*>(vector_at + r * kRingRowBytes) = vectors[r];
        if (copies_side) *reinterpret_cast<unsigned int*>(side_at + r * kRingRowBytes) = sides[r];
    }
}

// Blocks an SM at least (which caps registers at 102): 5 is faster than 4
// (111 registers) and 6 (80) on 4000x3000 RGB u8 edge and 780x585 on an
// H100.
constexpr int kWalkMinBlocks = 5;

// The walk over `down` bands of band_rows rows, `across` bands wide: the
// walk of whole bands from the image's top, or the tail walk (Tail: bands
// of one block from row first_row on, launched after the walk of whole
// bands to take its warps' places as it ends: registers_u8_tail_rows).
template <int R, int C, bool TakeAbs, bool Tail>
__global__ void __launch_bounds__(32 * kWalkWarps, kWalkMinBlocks)
    walk_kernel(const __grid_constant__ DeviceJob job, int across, int down, int band_rows,
                int first_row) {
    static_assert(3 * R + 2 <= kRingRows, "the ring holds a block's rows and the next two blocks'");
    __shared__ alignas(16) unsigned char ring[kWalkWarps][kRingRows][kRingRowBytes];
#if __CUDA_ARCH__ >= 900
    // The tail walk may start once every CUDA block of this walk has
    // (programmatic dependent launch). One instruction at the start: the
    // rest of the walk's code is as it would be without it but for a few
    // branches' scheduling bits, and its time with no tail walk the same
    // within noise.
    if constexpr (!Tail) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
    const int lane = static_cast<int>(threadIdx.x) % 32;
    const int warp = static_cast<int>(threadIdx.x) / 32;
    const int band = static_cast<int>(blockIdx.x) * kWalkWarps + warp;
    if (band >= across * down) return;  // whole warps: __syncwarp below sees all 32 lanes
    // The side columns first: their warps patch their rows (patch_ring_rows).
    const int2 at = sides_first_at(band, across, down);
    const int row_bytes = static_cast<int>(job.src_width) * C;  // < 2^30 (walk_u8_refusal)
    const int k = at.x * 512 + lane * 16;
    const std::int64_t y0 = (Tail ? first_row : 0) + static_cast<std::int64_t>(at.y) * band_rows;
    const int out_rows =
        static_cast<int>(job.src_height - y0 < band_rows ? job.src_height - y0 : band_rows);
    const int steps = (out_rows + R - 1) / R;
    unsigned char(*my_ring)[kRingRowBytes] = ring[warp];  // row r: input row y0 - 1 + r
    // A warp patches where its ring rows hold bytes before the row or the
    // first C past its end.
    const int end_at = row_bytes - at.x * 512;  // the row's end, from the warp's first byte
    const bool patches = at.x == 0 || (end_at >= -4 && end_at < 512 + 4);  // uniform
    // Bands whose rows all lie inside the image (all but the top and bottom
    // ones) skip the border policy.
    const bool inside = y0 >= 1 && y0 + static_cast<std::int64_t>(steps) * R < job.src_height;
    // The common band (load_full_band: kFullBlocks blocks, 2 in the walk of
    // whole bands, 1 in the tail walk) loads its rows into registers; any
    // other (the top and bottom ones, and every band of other heights)
    // copies them by cp.async, ring row r through the border policy: every
    // lane's vector that starts inside the row (whole: the bytes past the
    // row's end, up to its pitch, are initialised), lane 0's word before,
    // lane 31's after where they start inside the row; the next two blocks'
    // rows while the current block is summed.
    constexpr int kFullBlocks = Tail ? 1 : 2;
    const bool full = inside && steps == kFullBlocks;
    const unsigned int splat = 0x01010101u * static_cast<unsigned int>(job.border_value);
    const bool copies_vector = k < row_bytes;
    const bool copies_before = lane == 0 && k >= 4;
    const bool copies_after = lane == 31 && k + 16 < row_bytes;
    auto issue_row = [&](int r) {
        unsigned char* slot = my_ring[r % kRingRows];
        unsigned char* vector = slot + kRingData + 16 * lane;
        std::int64_t y = y0 - 1 + r;
        if (!inside) {
            y = image_row(job, y);
            if (y == kBorderConstant) {
                *reinterpret_cast<uint4*>(vector) = make_uint4(splat, splat, splat, splat);
                if (lane == 0) *reinterpret_cast<unsigned int*>(slot + kRingData - 4) = splat;
                if (lane == 31) *reinterpret_cast<unsigned int*>(slot + kRingData + 512) = splat;
                return;
            }
        }
        const std::byte* from = job.src + y * job.src_pitch + k;
        if (copies_vector) __pipeline_memcpy_async(vector, from, 16);
        if (copies_before) __pipeline_memcpy_async(slot + kRingData - 4, from - 4, 4);
        if (copies_after) __pipeline_memcpy_async(slot + kRingData + 512, from + 16, 4);
    };
    // Block s's rows: s R ... s R + R + 1; the first block's all, each later
    // one's R new ones. A commit group a block, even empty (the common
    // band commits only empty ones).
    // Unrolled, the rows' addresses are worked out together (4000x3000 RGB
    // edge 34.4 us against 35.6 with every band copied this way); not on
    // RGBA, where that spills (its registers are the most: ptxas, 12 bytes).
    constexpr int kUnroll = C == 4 ? 1 : R + 2;
    auto issue_block = [&](int s) {
        if (s == 0) {
#pragma unroll kUnroll
            for (int r = 0; r < R + 2; ++r) issue_row(r);
        } else if (s < steps) {
#pragma unroll kUnroll
            for (int i = 0; i < R; ++i) issue_row(s * R + 2 + i);
        }
        __pipeline_commit();
    };
    if (full) {
        load_full_band<R, kFullBlocks>(job, my_ring, lane, k, row_bytes, y0);
    } else {
        issue_block(0);
        issue_block(1);
    }
    // Block s's first output row. Moved on a block, but worked out afresh
    // on RGBA, whose registers are the most: held across blocks it spills
    // (ptxas, 16 bytes), and 3000x2000 RGBA edge takes 27.6 us against 26.8.
    std::byte* to = job.dst + y0 * job.dst_pitch + k;
#pragma unroll 1
    for (int s = 0; s < steps; ++s) {
        __pipeline_wait_prior(1);  // block s's group is done; s + 1's may not be
        __syncwarp();
        if (patches) {
            // RGBA's patches by lane 0 alone: called by the whole warp, the
            // kernel spills (ptxas, 12 bytes) and 3000x2000 RGBA edge takes
            // 26.3-27.0 us against 24.6-26.2 (H100, launch timing).
            constexpr int kLanes = C == 4 ? 1 : 32;
            if (kLanes == 32 || lane == 0) {
                if (s == 0) patch_ring_rows<C, R + 2, kLanes>(job, my_ring, 0, y0 - 1, at.x, lane);
                else
                    patch_ring_rows<C, R, kLanes>(job, my_ring, s * R + 2, y0 + s * R + 1, at.x,
                                                  lane);
            }
            __syncwarp();
        }
        unsigned int win[R + 2][kWindowWords];
        read_window<R>(my_ring, s * R, lane, win);
        __syncwarp();  // every lane has read block s's rows: their slots may be refilled
        issue_block(s + 2);
        unsigned int out[R][4];
        sum_u8_block<R, C, TakeAbs>(win, out);
        if (C == 4) to = job.dst + (y0 + s * R) * job.dst_pitch + k;
        store_u8_rows<R>(out, to, job.dst_pitch, row_bytes - k, out_rows - s * R);
        to += R * job.dst_pitch;
    }
#if __CUDA_ARCH__ >= 900
    // The tail walk ends after the walk it follows, so that the work after
    // it on the stream sees both walks' rows: it may start while that walk
    // still runs, and needs none of its rows.
    if constexpr (Tail) asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

}  // namespace

std::vector<TuningParam> walk_u8_tuning_params() {
    return {
        {"band_rows", "rows of a warp's band, rounded up to whole blocks of 4 (default 8)", 1,
         4096},
        {"tail_rows", "bottom rows the tail walk takes (default: the measured rule; 0: none)", 0,
         1 << 30},
    };
}

WalkSettings walk_settings(const Tuning& tuning) {
    WalkSettings s;
    if (const auto rows = tuning.get("band_rows"))
        s.band_rows = (*rows + kRows - 1) / kRows * kRows;
    if (const auto tail = tuning.get("tail_rows")) s.tail_rows = *tail;
    return s;
}

void registers_u8_prepare(const std::vector<double>& taps, cudaStream_t stream) {
    // Group 0 of each filter row's DP4A words: a 3x3 row fits one word.
    const std::vector<std::int32_t> words = strips_dp4a_words(taps, 3);
    if (words.empty()) throw CudaError("fast.walk-u8 takes integer taps in [-128, 127]");
    const std::int32_t rows[3] = {words[0 * kDp4aGroups], words[1 * kDp4aGroups],
                                  words[2 * kDp4aGroups]};
    CUDA_CHECK(cudaMemcpyToSymbolAsync(c_dp4a_rows, rows, 3 * sizeof(std::int32_t), 0,
                                       cudaMemcpyHostToDevice, stream));
}

std::int64_t registers_u8_tail_rows(std::int64_t height, std::int64_t across, int band_rows,
                                    std::int64_t resident_warps,
                                    std::optional<std::int64_t> wanted_rows) {
    // The share of a wave, in percent, by the waves of the image's bands
    // (H100, RGB u8 edge, with the tail walk against without): under 3/4 of
    // a wave, the whole image (780x585 6.7 us against 8.2, 1920x1080 10.0
    // against 10.6, 2000x1000 9.8 against 10.0); from 1.5 waves, half a
    // wave (3000x2000 18.5 against 18.9, 4000x3000 30.8 against 31.0,
    // 8000x6000 within 0.2 us); between, none (2560x1440: 13.3 without,
    // 13.6 with half a wave, 13.7 with the whole image; gray 4000x3000
    // within 0.2 us either way).
    std::int64_t wanted = -1;
    if (wanted_rows && *wanted_rows >= 0) wanted = std::min(*wanted_rows, height);
    if (wanted < 0) {
        const std::int64_t band_warps = across * ((height + band_rows - 1) / band_rows);
        const std::int64_t share = 4 * band_warps <= 3 * resident_warps  ? 100000  // percent
                                   : 2 * band_warps < 3 * resident_warps ? 0
                                                                         : 50;
        const std::int64_t tail_warps = resident_warps * share / 100;
        wanted = std::min(height, kRows * ((tail_warps + across - 1) / across));
    }
    if (wanted == 0) return 0;  // the walk's last band may be partial
    return height - (height - wanted) / band_rows * band_rows;
}

namespace {

// The walk of the job, whose bottom rows (registers_u8_tail_rows) the tail
// walk takes.
template <int C, bool TakeAbs>
void launch_walks(const DeviceJob& job, std::int64_t across, const WalkSettings& settings,
                  cudaStream_t stream) {
    const int band_rows = settings.band_rows;
    constexpr unsigned int kThreads = 32 * kWalkWarps;
    auto* head_kernel = &walk_kernel<kRows, C, TakeAbs, false>;
    auto* tail_kernel = &walk_kernel<kRows, C, TakeAbs, true>;
    static PerDevice<std::int64_t> resident_warps_on;  // asked once a kernel a device
    const std::int64_t resident_warps = resident_warps_on.get([&] {
        return std::int64_t{kWalkWarps} *
               resident_blocks(reinterpret_cast<const void*>(head_kernel), kThreads, 0);
    });
    const std::int64_t tail_rows = registers_u8_tail_rows(job.src_height, across, band_rows,
                                                          resident_warps, settings.tail_rows);
    const std::int64_t head_rows = job.src_height - tail_rows;
    // CUDA blocks for `down` bands across, a warp a band.
    const auto blocks_for = [across](std::int64_t down) {
        return static_cast<unsigned int>((across * down + kWalkWarps - 1) / kWalkWarps);
    };
    if (head_rows > 0) {
        const std::int64_t down = (head_rows + band_rows - 1) / band_rows;
        head_kernel<<<blocks_for(down), kThreads, 0, stream>>>(
            job, static_cast<int>(across), static_cast<int>(down), band_rows, 0);
    }
    if (tail_rows > 0) {
        const std::int64_t down = (tail_rows + kRows - 1) / kRows;
        cudaLaunchConfig_t config{};
        config.gridDim = dim3(blocks_for(down));
        config.blockDim = dim3(kThreads);
        config.stream = stream;
        // Its CUDA blocks take the SMs' places as the walk above ends, once
        // that walk's last blocks have started (programmatic dependent
        // launch, sm_90 and later).
        cudaLaunchAttribute follows{};
        follows.id = cudaLaunchAttributeProgrammaticStreamSerialization;
        follows.val.programmaticStreamSerializationAllowed = 1;
        config.attrs = &follows;
        config.numAttrs = head_rows > 0 && current_device().cc_major >= 9 ? 1 : 0;
        CUDA_CHECK(cudaLaunchKernelEx(&config, tail_kernel, job, static_cast<int>(across),
                                      static_cast<int>(down), kRows, static_cast<int>(head_rows)));
    }
}

}  // namespace

void registers_u8_launch(const DeviceJob& job, const WalkSettings& settings, cudaStream_t stream) {
    if (settings.band_rows <= 0 || settings.band_rows % kRows != 0) {
        throw CudaError("fast: the register path's bands are whole blocks of 4 rows");
    }
    const std::int64_t across = (job.src_width * job.channels + 511) / 512;
    if (across * ((job.src_height + kRows - 1) / kRows) > 0x7fffffff - kWalkWarps) {
        throw CudaError("fast: the image has too many rows for the register path");
    }
    switch (job.channels * 2 + (job.take_abs ? 1 : 0)) {
        case 2: return launch_walks<1, false>(job, across, settings, stream);
        case 3: return launch_walks<1, true>(job, across, settings, stream);
        case 6: return launch_walks<3, false>(job, across, settings, stream);
        case 7: return launch_walks<3, true>(job, across, settings, stream);
        case 8: return launch_walks<4, false>(job, across, settings, stream);
        case 9: return launch_walks<4, true>(job, across, settings, stream);
        default: throw CudaError("fast: the register path was asked for a job it does not take");
    }
}

}  // namespace cudaconv
