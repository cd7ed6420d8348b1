// fast.tiles: the project's own direct kernel, built to run at the memory
// floor on Hopper, and the path of `fast` for filters 9x9 to 15x15 (the
// paths and how fast picks one: kernels/fast/fast_paths.cu). What it does
// differently from the tutorial ladder:
//  - it reads and writes the image's own depth and interleaved layout (u8
//    RGB stays u8: 2 bytes of traffic per sample, not 8 as in a float copy);
//  - the input comes into shared memory through the bulk-copy engine
//    (kernels/device/bulk_copy.cuh): a resident grid of blocks takes the image's
//    tiles from a counter as each frees up, and while a block filters one
//    tile the rows of its next tile are already on the way, one
//    cp.async.bulk a row, so the bytes in flight that cover DRAM latency
//    cost neither registers nor instructions. (16-byte vectors loaded into
//    registers, tiles' halos included, reach 41% of DRAM bandwidth on
//    gray f32 3x3: too few bytes in flight.)
//  - every thread owns one 16-byte vector of output samples in each of R
//    rows: it reads its window of 16-byte vectors from shared memory,
//    keeps R accumulator rows in registers, and stores 16-byte vectors;
//  - interleaved channels are one row of samples whose taps sit C samples
//    apart, so the channel count, filter size and sample type are template
//    parameters and every tap is an immediate offset into registers; up to
//    7x7 (f32) or 9x9 (u8) its weight is an immediate operand from
//    __constant__ memory, and larger filters loop over their rows a few at
//    a time (see `rolled`).
// Tiles whose window leaves the image are copied as far as the image goes,
// and the samples outside are then written through the border policy, so
// every border mode is exact. One case cannot be held in a tile of the
// input's type: a constant border value that is not a u8 (0.5, 300); those
// jobs' edge tiles read through the border policy from global memory
// instead. Jobs outside its instantiations (even or non-square sizes, an
// anchor off centre, `valid`, u16 input, sides past 15) are refused with
// the reason; `fast` gives them to its tensor-core path (fast.mma).
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

#include "kernels/device/bulk_copy.cuh"
#include "kernels/runtime/cuda_backend.hpp"
#include "kernels/runtime/cuda_check.hpp"
#include "kernels/runtime/cuda_resources.hpp"
#include "kernels/device/device_common.cuh"
#include "kernels/fast/fast_tiles.hpp"
#include "kernels/device/vector_store.cuh"

namespace cudaconv {
namespace {

// Odd square sizes up to 15x15: the named 3x3 filters, box/gaussian up to
// 15 (a Gaussian of sigma <= 2.3) and dense 15x15. Each size costs build
// time for 3 channel counts x 2 sample types.
constexpr std::array<int, 7> kSides{3, 5, 7, 9, 11, 13, 15};
constexpr int kLargestSide = 15;
constexpr int kMaxTaps = kLargestSide * kLargestSide;
// One vector per load and store: Hopper's widest per-thread access.
constexpr int kVectorBytes = 16;
// A block is 2 warps across (64 vectors: 1 KB of a row) and kWarpsY down;
// each thread makes R rows, so a tile is 1 KB wide and kWarpsY * R rows.
constexpr int kWarpsX = 2;
constexpr int kTileVectors = 32 * kWarpsX;
// Tiles a block holds in shared memory: the one it filters and the one
// arriving. (Three, or cp.async instead of the bulk copies, are no
// faster.)
constexpr int kStages = 2;

// Per sample type: warps down a block, and for the unrolled filters output
// rows a thread and blocks an SM at least (which caps registers; the
// rolled filters have their own, rows_a_thread and min_blocks). A block
// waits for its tile and at a barrier after it, so the more blocks an SM
// holds, the better those waits overlap: on an H100, f32 3x3 takes 57.6 us
// at 3 blocks of 256 threads against 71.7 at 2, and u8 RGB edge 131.2 us
// at 8 blocks of 128 threads making 2 rows each against 173.9 at 2 blocks
// of 256 making 4.
constexpr int kFastU8WarpsY = 2;      // u8: warps down a block
constexpr int kFastU8Rows = 2;        // u8: output rows a thread, unrolled filters
constexpr int kFastU8MinBlocks = 8;   // u8: blocks an SM at least, unrolled filters
constexpr int kFastF32WarpsY = 4;     // f32: warps down a block
constexpr int kFastF32Rows = 8;       // f32: output rows a thread, unrolled filters
constexpr int kFastF32MinBlocks = 3;  // f32: blocks an SM at least, unrolled filters
template <typename In>
struct Shape {
    static constexpr bool kBytes = sizeof(In) == 1;
    static constexpr int kWarpsY = kBytes ? kFastU8WarpsY : kFastF32WarpsY;
    static constexpr int R = kBytes ? kFastU8Rows : kFastF32Rows;
    static constexpr int kMinBlocks = kBytes ? kFastU8MinBlocks : kFastF32MinBlocks;
    static constexpr int kThreads = 32 * kWarpsX * kWarpsY;
};

// Filters of 9x9 (f32) or 11x11 (u8) and up are rolled: a loop over their
// rows, J rows a step, their taps for the step loaded into registers.
// Unrolled whole, a 15x15 f32 thread is 7200 FMAs of straight code,
// several times the SM's instruction cache, and ptxas leaves it half rolled
// with a constant load for every tap use. Smaller filters stay unrolled
// whole, their taps immediate operands. Chosen by sweeps on an H100 at
// 4000x3000:
//  - f32: J = 2 on gray and 3 on colour (gray 15x15 145 against 162 us,
//    RGB 496 against 596), each thread making 4 rows (R) where the
//    unrolled make 8: tiles of 16 rows, so 3 blocks of 8 warps an SM fit
//    in shared memory and the last tiles of a run end sooner (gray 15x15
//    145 against 157 us at 8 rows);
//  - u8: J = 1 (gray 15x15 194 us against 243 at J = 3, RGB 851 against
//    1101), at least 5 blocks an SM (u8 tiles of 11x11 to 15x15 leave
//    room for 5 to 7).
constexpr int kFastF32RolledFrom = 9;       // f32: the smallest rolled side
constexpr int kFastU8RolledFrom = 11;       // u8: the smallest rolled side
constexpr int kFastF32GrayRowsAStep = 2;    // J, f32 gray
constexpr int kFastF32ColourRowsAStep = 3;  // J, f32 colour
constexpr int kFastU8RowsAStep = 1;         // J, u8
constexpr int kFastF32RolledRows = 4;       // R, f32 rolled (u8 rolled keeps kFastU8Rows)
constexpr int kFastF32RolledMinBlocks = 3;  // f32 rolled: blocks an SM at least
constexpr int kFastU8RolledMinBlocks = 5;   // u8 rolled: blocks an SM at least
template <typename In>
CC_HD constexpr bool rolled(int side) {
    return side >= (sizeof(In) == 1 ? kFastU8RolledFrom : kFastF32RolledFrom);
}
// J: filter rows a step (the whole filter where it is not rolled).
template <typename In>
CC_HD constexpr int filter_rows_a_step(int side, int channels) {
    if (!rolled<In>(side)) return side;
    if (sizeof(In) == 1) return kFastU8RowsAStep;
    return channels == 1 ? kFastF32GrayRowsAStep : kFastF32ColourRowsAStep;
}
// R: output rows a thread.
template <typename In>
CC_HD constexpr int rows_a_thread(int side) {
    return sizeof(In) == 4 && rolled<In>(side) ? kFastF32RolledRows : Shape<In>::R;
}
template <typename In>
CC_HD constexpr int min_blocks(int side) {
    if (!rolled<In>(side)) return Shape<In>::kMinBlocks;
    return sizeof(In) == 1 ? kFastU8RolledMinBlocks : kFastF32RolledMinBlocks;
}

__constant__ float c_taps[kMaxTaps];

template <typename In>
CC_HD constexpr int samples_per_vector() {
    return kVectorBytes / static_cast<int>(sizeof(In));
}

// Output rows a tile, under a Side x Side filter.
template <typename In>
CC_HD constexpr int tile_output_rows(int side) {
    return Shape<In>::kWarpsY * rows_a_thread<In>(side);
}

// The shape of a tile of one instantiation, in samples, rows and bytes.
template <int Side, int C, typename In>
struct Tile {
    static constexpr int S = samples_per_vector<In>();
    static constexpr int R = rows_a_thread<In>(Side);
    static constexpr int kThreads = Shape<In>::kThreads;
    static constexpr int kHalo = (Side / 2) * C;  // samples each side of an output
    static constexpr int kHaloVectors = (kHalo + S - 1) / S;
    static constexpr int kOutputSamples = kTileVectors * S;  // across
    static constexpr int kOutputRows = tile_output_rows<In>(Side);
    static constexpr int kRowSamples = kOutputSamples + 2 * kHaloVectors * S;  // staged, across
    static constexpr int kRowBytes = kRowSamples * static_cast<int>(sizeof(In));
    static constexpr int kRows = kOutputRows + Side - 1;  // staged, down
    static constexpr int kBufferBytes = kRowBytes * kRows;
    static constexpr int kSharedBytes = kStages * kBufferBytes;
};

// Tiles handed out to blocks as they ask, one counter a thread
// (kept_schedule). Its launches never overlap: CudaBackend::run waits for
// its stream before it returns, and a thread runs one job at a time. Zero
// between launches: the kernel's last block resets it.
struct TileSchedule {
    unsigned int next;         // tiles taken past each block's first
    unsigned int blocks_done;  // blocks that have left the kernel
};

// The tiles of the image, row-major. 32-bit: a tile index is divided
// twice a tile by every thread, and 64-bit division is a slow call
// (tile_paths_refusal sends images of more tiles to the tensor-core path).
struct TileGrid {
    int across = 0;
    int count = 0;
};

// The S samples of a 16-byte vector as floats.
template <typename In>
__device__ __forceinline__ void unpack(const uint4& v, float* out) {
    if constexpr (sizeof(In) == 1) {
        // Byte b into the mantissa of 2^23 (0x4B0000bb is 2^23 + b), minus
        // 2^23: one PRMT and one FADD at full rate, where an I2F runs at a
        // quarter rate and bounded the u8 kernels.
        const unsigned int words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int w = 0; w < 4; ++w) {
#pragma unroll
            for (int b = 0; b < 4; ++b) {
                out[w * 4 + b] =
                    __uint_as_float(__byte_perm(words[w], 0x4B000000u, 0x7440u + b)) - 8388608.0f;
            }
        }
    } else {
        out[0] = __uint_as_float(v.x);
        out[1] = __uint_as_float(v.y);
        out[2] = __uint_as_float(v.z);
        out[3] = __uint_as_float(v.w);
    }
}

// Filter rows [j0, j0 + J) of a thread's R x S sums. Staged row j0 + q
// (q < R + J - 1, counted from the thread's first) meets accumulator row
// o = q - jj through filter row j0 + jj, so each row is read and unpacked
// once a call and multiplied into every accumulator row it reaches. Every
// sum still adds its products in filter-row, then column order, whatever J.
template <int Side, int C, int R, int S, int kFirst, int kWindow, int J, typename LoadRow>
__device__ __forceinline__ void add_filter_rows(int j0, const LoadRow& load_row,
                                                float (&acc)[R][S]) {
    // Each tap serves R output rows: loaded once a step. (Where j0 is known
    // at compile time, these fold into constant-bank operands.)
    float taps[J][Side];
#pragma unroll
    for (int jj = 0; jj < J; ++jj) {
#pragma unroll
        for (int i = 0; i < Side; ++i) taps[jj][i] = c_taps[(j0 + jj) * Side + i];
    }
#pragma unroll
    for (int q = 0; q < R + J - 1; ++q) {
        float window[kWindow];
        load_row(j0 + q, window);
#pragma unroll
        for (int jj = 0; jj < J; ++jj) {
            const int o = q - jj;
            if (o < 0 || o >= R) continue;  // resolved at compile time
#pragma unroll
            for (int i = 0; i < Side; ++i) {
#pragma unroll
                for (int s = 0; s < S; ++s) acc[o][s] += taps[jj][i] * window[kFirst + s + i * C];
            }
        }
    }
}

// The R x S sums over every filter row, in steps of filter_rows_a_step
// rows (the last step takes what is left). load_row(r, window) fills the
// window from the thread's r-th input row.
template <int Side, int C, typename In, int R, int S, int kFirst, int kWindow, typename LoadRow>
__device__ __forceinline__ void accumulate(const LoadRow& load_row, float (&acc)[R][S]) {
    constexpr int J = filter_rows_a_step<In>(Side, C);
    constexpr int kSteps = Side / J;
    constexpr int kLeft = Side % J;
    if constexpr (kSteps == 1) {
        add_filter_rows<Side, C, R, S, kFirst, kWindow, J>(0, load_row, acc);
    } else {
#pragma unroll 1
        for (int step = 0; step < kSteps; ++step) {
            add_filter_rows<Side, C, R, S, kFirst, kWindow, J>(step * J, load_row, acc);
        }
    }
    if constexpr (kLeft > 0) {
        add_filter_rows<Side, C, R, S, kFirst, kWindow, kLeft>(kSteps * J, load_row, acc);
    }
}

// The R x S accumulators of one thread from the staged tile: its window of
// 2 * kHaloVectors + 1 vectors in each of R + Side - 1 staged rows,
// starting at the tile's vector v and row row0.
template <int Side, int C, typename In>
__device__ __forceinline__ void accumulate_staged(
    const std::byte* tile, int v, int row0,
    float (&acc)[Tile<Side, C, In>::R][Tile<Side, C, In>::S]) {
    using T = Tile<Side, C, In>;
    constexpr int S = T::S;
    constexpr int kWindow = (2 * T::kHaloVectors + 1) * S;
    constexpr int kFirst = T::kHaloVectors * S - T::kHalo;  // window index of tap 0 of sample 0
    const std::byte* first_row = tile + row0 * T::kRowBytes + v * kVectorBytes;
    accumulate<Side, C, In, T::R, S, kFirst, kWindow>(
        [&](int r, float* window) {
            const uint4* vectors = reinterpret_cast<const uint4*>(first_row + r * T::kRowBytes);
#pragma unroll
            for (int w = 0; w < 2 * T::kHaloVectors + 1; ++w) {
                unpack<In>(vectors[w], window + w * S);
            }
        },
        acc);
}

// Samples k_first ... k_first + count - 1 of input row y (any of them may
// lie outside the image) through the border policy, into out. Kept out of
// line so that the unrolled paths stay small and their registers their own.
template <typename In>
__device__ __noinline__ void load_row_bordered(const DeviceJob& job, std::int64_t k_first,
                                               int count, std::int64_t y, float* out) {
    const std::int64_t c = job.channels;
    for (int w = 0; w < count; ++w) {
        const std::int64_t k = k_first + w;
        const std::int64_t pixel = k >= 0 ? k / c : -((-k + c - 1) / c);
        out[w] = load_bordered<In>(job, pixel, y, static_cast<int>(k - pixel * c));
    }
}

// The same sums read from global memory through the border policy, sample
// by sample: edge tiles of jobs whose constant border value a tile of the
// input's type cannot hold.
template <int Side, int C, typename In>
__device__ __forceinline__ void accumulate_bordered(
    const DeviceJob& job, std::int64_t k0, std::int64_t y0,
    float (&acc)[Tile<Side, C, In>::R][Tile<Side, C, In>::S]) {
    using T = Tile<Side, C, In>;
    constexpr int S = T::S;
    constexpr int kWindow = (2 * T::kHaloVectors + 1) * S;
    constexpr int kFirst = T::kHaloVectors * S - T::kHalo;
    accumulate<Side, C, In, T::R, S, kFirst, kWindow>(
        [&](int r, float* window) {
            load_row_bordered<In>(job, k0 - T::kHalo, S + 2 * T::kHalo, y0 - Side / 2 + r,
                                  window + kFirst);
        },
        acc);
}

// Warp 0 asks for the rows of the tile whose staged area starts at sample
// k_base of input row y_base: each row's part inside the image (rounded out
// to whole vectors: rows are 16-byte aligned and padded to 16 bytes), rows
// outside it from the row the border policy names. Rows of a constant
// border are not copied (fill_outside writes them).
template <int Side, int C, typename In>
__device__ void request_tile(const DeviceJob& job, std::int64_t k_base, std::int64_t y_base,
                             std::byte* buffer, std::uint64_t* barrier) {
    using T = Tile<Side, C, In>;
    const int lane = static_cast<int>(threadIdx.x);
    const std::int64_t row_samples = job.src_width * C;
    const std::int64_t padded_samples = (row_samples + T::S - 1) / T::S * T::S;
    const std::int64_t first = max(k_base, std::int64_t{0});
    const std::int64_t end = min(k_base + T::kRowSamples, padded_samples);
    const auto bytes = static_cast<std::uint32_t>((end - first) * sizeof(In));
    const std::byte* src_column = job.src + first * static_cast<std::int64_t>(sizeof(In));
    std::byte* dst_column = buffer + (first - k_base) * static_cast<std::int64_t>(sizeof(In));

    // Reads of this buffer (the tile before last) and the fill's writes
    // come before the copies that overwrite it.
    fence_before_bulk_copy();
    unsigned int copies = 0;
    for (int r = lane; r < T::kRows; r += 32) {
        copies += border_index(job.border, y_base + r, job.src_height) != kBorderConstant;
    }
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    copies = __reduce_add_sync(0xffffffffu, copies);
#else  // before sm_80 (where the bulk copies below trap anyway)
    for (int offset = 16; offset > 0; offset /= 2) {
        copies += __shfl_xor_sync(0xffffffffu, copies, offset);
    }
#endif
    if (lane == 0) barrier_arrive_expect(barrier, copies * bytes);
    for (int r = lane; r < T::kRows; r += 32) {
        const std::int64_t y = border_index(job.border, y_base + r, job.src_height);
        if (y == kBorderConstant) continue;
        bulk_copy_to_shared(dst_column + r * T::kRowBytes, src_column + y * job.src_pitch, bytes,
                            barrier);
    }
}

// The staged samples the copies did not bring: those left of the image or
// right of its last sample (the row's padding included), through the
// border policy, and whole rows of a constant border above or below it.
template <int Side, int C, typename In>
__device__ void fill_outside(const DeviceJob& job, std::int64_t k_base, std::int64_t y_base,
                             std::byte* buffer) {
    using T = Tile<Side, C, In>;
    In* staged = reinterpret_cast<In*>(buffer);
    constexpr int kStride = T::kRowBytes / static_cast<int>(sizeof(In));
    const std::int64_t row_samples = job.src_width * C;
    // Staged samples [0, left) and [right, kRowSamples) lie outside the row.
    // Of those right of it, only up to `end` are read: the windows of the
    // vectors that hold outputs reach at most kHaloVectors vectors past the
    // row's last one. (Filling the whole tile cost the last tile of a row
    // of 1500 RGB pixels 650 samples a staged row, one border lookup each.)
    const int left =
        static_cast<int>(min(max(-k_base, std::int64_t{0}), std::int64_t{T::kRowSamples}));
    const int right = static_cast<int>(
        min(max(row_samples - k_base, std::int64_t{0}), std::int64_t{T::kRowSamples}));
    const int end = min((right + T::S - 1) / T::S * T::S + T::kHaloVectors * T::S, T::kRowSamples);
    const int outside = left + (end - right);
    const In constant = static_cast<In>(job.border_value);
    for (int i = static_cast<int>(threadIdx.x); i < T::kRows * outside; i += T::kThreads) {
        const int r = i / outside;
        const int j = i - r * outside;
        const int q = j < left ? j : right + (j - left);
        const std::int64_t y = border_index(job.border, y_base + r, job.src_height);
        const std::int64_t k = k_base + q;
        const std::int64_t pixel = k >= 0 ? k / C : -((-k + C - 1) / C);
        const std::int64_t x = border_index(job.border, pixel, job.src_width);
        In value = constant;
        if (x != kBorderConstant && y != kBorderConstant) {
            const In* row = reinterpret_cast<const In*>(job.src + y * job.src_pitch);
            value = row[x * C + (k - pixel * C)];
        }
        staged[r * kStride + q] = value;
    }
    if (job.border != BorderMode::constant) return;
    const int inside = right - left;
    for (int r = 0; r < T::kRows; ++r) {
        if (border_index(job.border, y_base + r, job.src_height) != kBorderConstant) continue;
        for (int q = left + static_cast<int>(threadIdx.x); q < left + inside; q += T::kThreads) {
            staged[r * kStride + q] = constant;
        }
    }
}

template <int Side, int C, typename In>
__global__ void __launch_bounds__(Shape<In>::kThreads, min_blocks<In>(Side))
    fast_kernel(const __grid_constant__ DeviceJob job, TileGrid tiles, bool constant_fits,
                TileSchedule* schedule) {
    using T = Tile<Side, C, In>;
    constexpr int S = T::S;
    constexpr int R = T::R;
    extern __shared__ __align__(128) std::byte shared[];
    __shared__ std::uint64_t arrived[kStages];  // per buffer: its copies have landed
    __shared__ int tile_in[kStages];  // per buffer: its tile, or tiles.count past the last

    const std::int64_t row_samples = job.src_width * C;
    const int warp = static_cast<int>(threadIdx.x) / 32;
    const int lane = static_cast<int>(threadIdx.x) % 32;
    // This thread's vector column and first row within every tile.
    const int v = (warp % kWarpsX) * 32 + lane;
    const int row0 = (warp / kWarpsX) * R;

    auto k_base_of = [&](int t) {
        return static_cast<std::int64_t>(t % tiles.across) * T::kOutputSamples -
               T::kHaloVectors * S;
    };
    auto y_base_of = [&](int t) {
        return static_cast<std::int64_t>(t / tiles.across) * T::kOutputRows - Side / 2;
    };

    // Warp 0 takes the block's i-th tile (its first is blockIdx.x, the
    // others from the job's counter, in the order blocks ask) and asks for
    // its rows into buffer i % kStages. Tiles taken as blocks free up keep
    // every SM busy to the end, where a fixed share of tiles a block leaves
    // SMs idle for a fifth of a 15x15 f32 run (ncu).
    auto take_and_request = [&](int i) {
        if (warp != 0) return;
        int tile = static_cast<int>(blockIdx.x);
        if (i > 0) {
            unsigned int taken = 0;
            if (lane == 0) taken = atomicAdd(&schedule->next, 1u);
            // Unsigned, so that a counter left dirty (a launch that died
            // midway) still ends the walk instead of wrapping negative.
            const unsigned int index = gridDim.x + __shfl_sync(0xffffffffu, taken, 0);
            tile = index < static_cast<unsigned int>(tiles.count) ? static_cast<int>(index)
                                                                  : tiles.count;
        }
        const int stage = i % kStages;
        if (lane == 0) tile_in[stage] = tile;
        if (tile < tiles.count) {
            request_tile<Side, C, In>(job, k_base_of(tile), y_base_of(tile),
                                      shared + stage * T::kBufferBytes, &arrived[stage]);
        }
    };
    if (threadIdx.x == 0) {
        for (int b = 0; b < kStages; ++b) barrier_init(&arrived[b], 1);
    }
    __syncthreads();
    for (int b = 0; b + 1 < kStages; ++b) take_and_request(b);
    __syncthreads();
    // The counter hands out at most INT_MAX / 2 tiles (tile_paths_refusal),
    // plus a grid's worth of asks past the last, so tile indices fit an int.
    for (int i = 0;; ++i) {
        // Written by warp 0 before the barrier that ended the last tile.
        const int t = tile_in[i % kStages];
        if (t >= tiles.count) break;
        std::byte* buffer = shared + (i % kStages) * T::kBufferBytes;
        // The next tile's rows are on the way while this one is filtered.
        take_and_request(i + kStages - 1);
        const std::int64_t k_base = k_base_of(t);
        const std::int64_t y_base = y_base_of(t);
        const bool edge = k_base < 0 || k_base + T::kRowSamples > row_samples || y_base < 0 ||
                          y_base + T::kRows > job.src_height;
        barrier_wait(&arrived[i % kStages], (i / kStages) % 2);
        if (edge && constant_fits) {
            fill_outside<Side, C, In>(job, k_base, y_base, buffer);
            __syncthreads();
        }

        const std::int64_t k0 = k_base + T::kHaloVectors * S + static_cast<std::int64_t>(v) * S;
        const std::int64_t y0 = y_base + Side / 2 + row0;
        if (k0 < row_samples && y0 < job.src_height) {
            float acc[R][S];
#pragma unroll
            for (int o = 0; o < R; ++o) {
#pragma unroll
                for (int s = 0; s < S; ++s) acc[o][s] = 0.0f;
            }
            // Every f32 border value fits an f32 tile (constant_fits_input),
            // so only u8 kernels carry the bordered sums' code.
            bool staged = true;
            if constexpr (sizeof(In) == 1) {
                if (edge && !constant_fits) {
                    accumulate_bordered<Side, C, In>(job, k0, y0, acc);
                    staged = false;
                }
            }
            if (staged) accumulate_staged<Side, C, In>(buffer, v, row0, acc);

            const bool keep_alpha = C == 4 && job.filtered_channels == 3;
            const bool whole_vector = k0 + S <= row_samples;
#pragma unroll
            for (int o = 0; o < R; ++o) {
                const std::int64_t y = y0 + o;
                if (y >= job.src_height) break;
                float values[S];
#pragma unroll
                for (int s = 0; s < S; ++s) {
                    values[s] = finish_value(acc[o][s], job.scale, job.delta, job.take_abs);
                    // A kept alpha: channel 3 of every pixel (k0 is a multiple
                    // of 4), the input's own value.
                    if (keep_alpha && s % 4 == 3 && k0 + s < row_samples) {
                        values[s] = static_cast<float>(
                            reinterpret_cast<const In*>(job.src + y * job.src_pitch)[k0 + s]);
                    }
                }
                std::byte* out_row = job.dst + y * job.dst_pitch;
                if (whole_vector) {
                    store_samples_in<S>(job.out_depth, out_row, k0, values);
                } else {
                    // The row's last, partial vector: sample by sample.
                    for (int s = 0; s < S && k0 + s < row_samples; ++s) {
                        const std::int64_t k = k0 + s;
                        store_output(job, k / C, y, static_cast<int>(k % C), values[s]);
                    }
                }
            }
        }
        // Everyone is done with this buffer before it is asked for again.
        __syncthreads();
    }
    // The last block out resets the counter for the next launch: every
    // block has taken its last tile before it gets here. The fences order
    // each block's last take before its count, and every count before the
    // reset, across blocks.
    if (threadIdx.x == 0) {
        __threadfence();
        if (atomicAdd(&schedule->blocks_done, 1u) == gridDim.x - 1) {
            __threadfence();
            schedule->next = 0;
            schedule->blocks_done = 0;
        }
    }
}

// A constant border value that a tile of the input's samples can hold (or
// no constant border: then every staged sample is an input sample).
bool constant_fits_input(const DeviceJob& job) {
    if (job.border != BorderMode::constant || job.in_depth == Depth::f32) return true;
    const float v = job.border_value;
    return v >= 0.0f && v <= 255.0f && std::nearbyint(v) == v;
}

std::int64_t tiles_across(std::int64_t row_samples, int samples_per_vector) {
    const std::int64_t vectors = (row_samples + samples_per_vector - 1) / samples_per_vector;
    return (vectors + kTileVectors - 1) / kTileVectors;
}
std::int64_t tiles_down(std::int64_t height, int tile_rows) {
    return (height + tile_rows - 1) / tile_rows;
}

template <int Side, int C, typename In>
void launch_one(const DeviceJob& job, TileSchedule* schedule, std::int64_t max_blocks,
                cudaStream_t stream) {
    using T = Tile<Side, C, In>;
    auto* kernel = &fast_kernel<Side, C, In>;
    // Once an instantiation a device: its shared-memory limit, and how
    // many of its blocks an SM holds, which sizes the resident grid (any
    // size covers every tile; this one fills the device once).
    static PerDevice<int> resident_on;
    const int resident = resident_on.get([&] {
        CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        T::kSharedBytes));
        return resident_blocks(reinterpret_cast<const void*>(kernel), T::kThreads, T::kSharedBytes);
    });
    const std::int64_t across = tiles_across(job.src_width * C, T::S);
    TileGrid tiles;
    tiles.across = static_cast<int>(across);
    tiles.count = static_cast<int>(across * tiles_down(job.src_height, T::kOutputRows));
    const auto blocks = static_cast<unsigned int>(
        std::min({std::int64_t{tiles.count}, std::int64_t{resident}, max_blocks}));
    kernel<<<blocks, T::kThreads, T::kSharedBytes, stream>>>(job, tiles, constant_fits_input(job),
                                                             schedule);
}

template <int C, typename In, std::size_t... I>
bool launch_side(const DeviceJob& job, TileSchedule* schedule, std::int64_t max_blocks,
                 cudaStream_t stream, std::index_sequence<I...>) {
    return ((job.filter_width == kSides[I] &&
             (launch_one<kSides[I], C, In>(job, schedule, max_blocks, stream), true)) ||
            ...);
}

template <typename In>
bool launch_channels(const DeviceJob& job, TileSchedule* schedule, std::int64_t max_blocks,
                     cudaStream_t stream) {
    constexpr auto sides = std::make_index_sequence<kSides.size()>{};
    switch (job.channels) {
        case 1: return launch_side<1, In>(job, schedule, max_blocks, stream, sides);
        case 3: return launch_side<3, In>(job, schedule, max_blocks, stream, sides);
        case 4: return launch_side<4, In>(job, schedule, max_blocks, stream, sides);
        default: return false;
    }
}

bool is_instantiated_side(int side) {
    for (int s : kSides) {
        if (s == side) return true;
    }
    return false;
}

}  // namespace

std::string tiles_refusal(const Job& job) {
    const ConvParams& p = job.params;
    const Filter& f = p.filter;
    if (f.width != f.height || !is_instantiated_side(f.width)) {
        return fmt::format("fast.tiles is built for odd square filters 3x3 to 15x15; this one is "
                           "{}x{}",
                           f.width, f.height);
    }
    if (p.anchor_x != f.width / 2 || p.anchor_y != f.height / 2) {
        return "fast.tiles needs the anchor at the filter's centre";
    }
    if (p.border == BorderMode::valid) return "fast.tiles does not do the valid border";
    if (job.src.depth == Depth::u16) return "fast.tiles reads u8 and f32, not u16";
    if (job.src.channels == 2) return "fast.tiles is built for 1, 3 and 4 channels";
    // Tile indices are 32-bit, with room for a grid's worth of asks past
    // the last (a tile is at least 1 KB by 4 rows: about 4 TB of u8 image).
    const auto tiles_of = [&](auto sample) {
        using In = decltype(sample);
        return tiles_across(job.src.width * job.src.channels, samples_per_vector<In>()) *
               tiles_down(job.src.height, tile_output_rows<In>(f.width));
    };
    const std::int64_t tiles = job.src.depth == Depth::u8 ? tiles_of(std::uint8_t{})
                                                          : tiles_of(float{});
    if (tiles > std::numeric_limits<int>::max() / 2) {
        return "the image has more tiles than fast.tiles can number";
    }
    return {};
}

std::vector<TuningParam> tiles_tuning_params() {
    return {
        {"max_blocks", "the most CUDA blocks (default: as many as the device holds)", 1, 1 << 30}};
}

namespace {

// The counter the tile path's blocks take tiles from: one device word a
// thread, kept for its later runs (a thread holds one TilesRun at a time:
// each holds the constant taps' lock), because freeing it after each image
// would wait for the whole device.
TileSchedule* kept_schedule() {
    thread_local DeviceArray<TileSchedule> schedule{nullptr};
    if (!schedule) schedule = device_array<TileSchedule>(1);
    return schedule.get();
}

// One run of the tile path: the taps in constant memory (held until the run
// ends) and the counter its blocks take tiles from, zeroed.
class TilesRun final : public LaunchPlan {
public:
    TilesRun(const DeviceJob& job, int max_blocks, cudaStream_t stream)
        : lock_(lock_constant_taps(stream)),
          max_blocks_(max_blocks > 0 ? max_blocks : std::numeric_limits<std::int64_t>::max()) {
        copy_taps_to_constant(c_taps, job, stream);
        schedule_ = kept_schedule();
        CUDA_CHECK(cudaMemsetAsync(schedule_, 0, sizeof(TileSchedule), stream));
    }

    void launch(const DeviceJob& job, cudaStream_t stream) const override {
        if (job.dst_width <= 0 || job.dst_height <= 0) return;
        const bool launched =
            job.in_depth == Depth::u8
                ? launch_channels<std::uint8_t>(job, schedule_, max_blocks_, stream)
                : launch_channels<float>(job, schedule_, max_blocks_, stream);
        if (!launched) {
            throw CudaError(
                fmt::format("fast.tiles: no instantiation for a {}x{} filter on {} channels",
                            job.filter_width, job.filter_height, job.channels));
        }
    }

private:
    ConstantTapsLock lock_;
    std::int64_t max_blocks_;
    TileSchedule* schedule_ = nullptr;  // kept_schedule()'s
};

}  // namespace

std::unique_ptr<LaunchPlan> tiles_plan(const DeviceJob& job, int max_blocks, cudaStream_t stream) {
    return std::make_unique<TilesRun>(job, max_blocks, stream);
}

}  // namespace cudaconv
