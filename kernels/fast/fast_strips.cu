// fast's strip path, for filters of 3x3, 5x5 and 7x7 (kernels/fast/fast.cu
// picks it): each warp owns a band of the image 32 vectors wide and a few
// rows down and walks down it one input row at a time, with no block-wide
// barriers.
//  - Every lane copies one 16-byte vector (8 for u8 from 5x5) of each row
//    into the warp's ring of rows in shared memory (cp.async, several rows
//    ahead); the samples left and right of it that its outputs need it
//    reads from the neighbouring lanes' vectors there. The outer lanes (hv
//    of them each side) only supply those neighbours and write nothing, so
//    a warp writes 32 - 2 hv vectors.
//  - A lane keeps Side rows of accumulators, a ring: input row r adds into
//    output rows r - Side + 1 ... r, and output row r - Side + 1 is then
//    complete, is finished and stored as one vector, and its slot is reused.
//  - Rows outside the image are the border policy's rows (a uniform branch
//    a row); vectors that reach past either end of a row are rebuilt sample
//    by sample through the policy (a few lanes at the image's sides).
// It has none of the per-tile barrier waits that bound the tile path on
// these sizes: copies of the rows below are in flight while the rows above
// are filtered, and L1/L2 catch the Side - 1 rows that neighbouring bands
// both read.
#include "kernels/fast/fast_strips.hpp"

#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "core/device_job.hpp"
#include "kernels/runtime/cuda_backend.hpp"
#include "kernels/runtime/cuda_check.hpp"
#include "kernels/device/border_columns.cuh"
#include "kernels/device/device_common.cuh"
#include "kernels/device/dp4a.cuh"
#include "kernels/device/vector_store.cuh"

namespace cudaconv {
namespace {

constexpr int kLargestSide = 7;
__constant__ float c_taps[kLargestSide * kLargestSide];
// The integer path's taps: filter row j's columns 4g...4g+3 as the signed
// bytes of word j * kDp4aGroups + g (strips_dp4a_words).
__constant__ int c_dp4a_taps[kLargestSide * kDp4aGroups];

// A lane's vector: 16 bytes, or 8 where 16 samples a row would need more
// accumulators than registers (u8 filters of 5x5 and 7x7).
template <int Bytes>
struct VectorOf;
template <>
struct VectorOf<16> {
    using type = uint4;
};
template <>
struct VectorOf<8> {
    using type = uint2;
};
constexpr int kWarpsPerBlock = 4;
constexpr int kThreads = 32 * kWarpsPerBlock;

// Rows copied ahead (Band::kAhead), and blocks an SM at least
// (strips_min_blocks), which caps registers.
// u8 in 16-byte vectors (3x3) 8 rows ahead: on an H100 at 4000x3000, RGB u8
// edge 33.8 us at 8, 34.1 at 4, 35.4 at 2, 35.2 at 16.
constexpr int kStripsU8Ahead = 8;
// f32 rows 4 ahead, not 8: with fewer copies in flight a warp, gray f32
// 4000x3000 5x5 takes 43.7 us on an H100 against 45.0, 7x7 54.2 against
// 55.7, 2000x1000 3x3 2% less; 4000x3000 3x3 the same, RGB f32 3x3 1% more.
constexpr int kStripsF32Ahead = 4;
// u8 in 8-byte vectors (5x5, 7x7) 4 rows ahead too: against 8, on an H100
// at 4000x3000, RGB u8 random:5 85.1 us against 86.2, random:7 147.7
// against 149.3, gray u8 random:5 39.0 against 39.9.
constexpr int kStripsU8NarrowAhead = 4;
// Blocks an SM at least of the float path and of the integer path.
constexpr int kStripsMinBlocks = 4;
constexpr int kStripsIntMinBlocks = 4;
// u8 3x3 (float and integer paths) fits 5 blocks without spilling (96
// registers), and the fifth block makes RGB u8 edge 4% faster and gray u8
// edge 7% on an H100. f32 3x3 and gray f32 5x5 would fit 8 blocks in 64
// registers without spilling, but are no faster for it, so they keep 4.
constexpr int kStrips3x3U8MinBlocks = 5;

template <int Side, int C, typename In, int VB>
struct Band {
    using Vec = typename VectorOf<VB>::type;
    static constexpr int kWords = VB / 4;                        // words a vector
    static constexpr int S = VB / static_cast<int>(sizeof(In));  // samples a vector
    static constexpr int kHalo = (Side / 2) * C;                 // samples each side of an output
    static constexpr int kHaloVectors = (kHalo + S - 1) / S;     // lanes each side that only load
    static constexpr int kOutputLanes = 32 - 2 * kHaloVectors;
    static constexpr int kOutputSamples = kOutputLanes * S;  // a warp's width
    static constexpr int kWindow = (2 * kHaloVectors + 1) * S;
    // Window index of the first sample an output of this lane reads.
    static constexpr int kFirst = kHaloVectors * S - kHalo;
    // Rows whose loads are in flight ahead of the row being filtered.
    static constexpr int kAhead = sizeof(In) != 1 ? kStripsF32Ahead
                                  : VB == 16      ? kStripsU8Ahead
                                                  : kStripsU8NarrowAhead;
    static_assert(kHaloVectors <= 4, "a band needs most of its lanes for outputs");
};

// Bands across and down of one job's image, and how it finishes integers.
struct BandGrid {
    int across = 0;
    int count = 0;
    int rows = 0;               // output rows a band, below the head
    StripHead head;             // the top rows of bands, of rising heights
    std::int64_t head_end = 0;  // head.end(): where the bands of `rows` start
    bool sides_first = true;    // band_at's order (the tuning parameter sides_first=0: row by row)
    bool magic_finish = false;  // store_samples_magic (vector_store.cuh) is exact for this job
    // Integer sums that are the outputs as they are (scale 1, delta 0): only
    // clamped, with no float finish.
    bool integer_finish = false;
};

// A row of S sums, by value, for the out-of-line store.
template <int S>
struct Sums {
    float v[S];
};

std::int64_t power_of_two_at_least(std::int64_t n) {
    std::int64_t p = 1;
    while (p < n) p *= 2;
    return p;
}

}  // namespace

// Output rows a band: taller bands read fewer rows twice (a band reads
// rows + Side - 1), shorter ones make more bands, and so more warps to
// hide latency and a shorter tail. On an H100 the best heights are about
// one band per 12000 band-columns x rows of the image for u8 (4000x3000
// RGB u8 3x3: 8; 5x5 and 7x7, in bands half as wide: 16), and per 24000
// for f32, within 4...16, but at least 2 (Side - 1) to the next power of
// two (gray u8 3x3: 4, 5x5: 8). f32 images with at least 4 such areas a
// band (gray 4000x3000 has 4.25) do best at 3 (Side - 1) (gray 4000x3000:
// 3x3 41.3 us in bands of 6 against 41.8 in bands of 4; 5x5 44.5 in bands
// of 12 against 46.3 in bands of 8), smaller ones do not (gray 3000x2000,
// about 2 areas a band: 3x3 24.1 against 23.4; 2000x1000: 14.6 against
// 12.8), and u8 does not (gray 5x5: 44.2 in bands of 12 against 41.1 in
// bands of 8). Those heights were measured with 8 rows copied ahead; with
// f32's 4, gray f32 3x3 is 1% faster in bands of 10 than of 6, which the
// rule leaves. The tuning parameter band_rows sets the height instead.
int strips_band_rows(std::int64_t across, std::int64_t height, int side, bool float_samples) {
    const double band_area = float_samples ? 24000.0 : 12000.0;
    const double per_band = static_cast<double>(across) * static_cast<double>(height) / band_area;
    std::int64_t nearest = 4;
    while (nearest < 16 && nearest * 3 / 2 < per_band) nearest *= 2;  // the nearer power of 2
    const std::int64_t floor =
        float_samples && per_band >= 4.0 ? 3 * (side - 1) : power_of_two_at_least(2 * (side - 1));
    return static_cast<int>(std::min<std::int64_t>(16, std::max(nearest, floor)));
}

namespace {

// Band indices are 32-bit: launch_one makes bands taller, and strips_head
// drops a head, to keep the count of bands under this.
constexpr std::int64_t kMostBands = std::int64_t{1} << 30;

// The bands of an image `height` rows tall, `across` side by side: `head`'s,
// then bands of `rows` below it.
std::int64_t strips_band_count(std::int64_t across, std::int64_t height, int rows,
                               const StripHead& head) {
    return across * (head.count + (height - head.end() + rows - 1) / rows);
}

}  // namespace

// The head (StripHead) of u8 3x3 jobs in bands of 6 to 8 rows that fill
// the GPU at least twice over: heights from 2 rows to 3 times the bands'
// height, a step a group of rows of bands, the groups together about 1.1
// times as many bands as run at once. Bands that all start together and
// take about as long also finish together, and the next wave's copies then
// all wait on DRAM at once while its warps have nothing to filter: a trace
// of every warp's start, first row and end on 4000x3000 RGB u8 edge shows
// the waves in step from the first to the last without a head. On an H100
// the head takes RGB u8 edge from 35.4 to 33.5 us and RGBA u8 edge from
// 76.0 to 74.3; heights up to 2 * (rows - 1) gain half as much, up to
// 4 * rows lose 3%. It is left off where it makes jobs slower: f32 (gray
// 3x3 within 1%, and slower under bands of 10), bands of 4 rows (gray u8
// edge +3%, 3000x2000 RGB u8 edge +7%), and 5x5 and 7x7 (+5-21%).
// The tuning parameters head=0 turn it off, and head_low, head_high and
// head_group set it for any strip job.
StripHead strips_head(std::int64_t across, std::int64_t height, int side, int rows,
                      bool float_samples, std::int64_t resident) {
    const std::int64_t bands = strips_band_count(across, height, rows, StripHead{});
    if (float_samples || side != 3 || rows < 6 || rows > 8 || across < 1 || bands < 2 * resident) {
        return StripHead{};
    }
    const int steps = 3 * rows - 1;  // heights 2 ... 3 rows
    const double groups = 1.1 * static_cast<double>(resident) / static_cast<double>(across * steps);
    StripHead head{0, static_cast<int>(std::max(1.0, std::round(groups))), 2};
    head.count = steps * head.group;
    return head;
}

namespace {

// `head`, or none on a short image (bands as measured), or where a set
// head's short bands would pass a 32-bit band index (the rule's only make
// bands taller).
StripHead fitted_head(const StripHead& head, std::int64_t across, std::int64_t height, int rows) {
    if (head.end() >= height || strips_band_count(across, height, rows, head) >= kMostBands) {
        return StripHead{};
    }
    return head;
}

}  // namespace

std::vector<TuningParam> strips_tuning_params() {
    return {
        {"band_rows", "output rows a warp's band (default: the measured rule)", 1, 4096},
        {"head", "0: no head of rising band heights", 0, 0},
        {"head_low", "the head's first band height (with head_high and head_group)", 1, 4096},
        {"head_high", "the head's last band height", 1, 4096},
        {"head_group", "rows of bands a height of the head", 1, 4096},
        {"sides_first", "1: a band's side columns before its middle; 0: after", 0, 1},
        {"dp4a", "1: integer taps on u8 summed with DP4A; 0: in floats", 0, 1},
    };
}

StripSettings strip_settings(const Tuning& tuning) {
    StripSettings s;
    s.band_rows = tuning.get("band_rows").value_or(0);
    if (tuning.get("head") == 0) s.head = StripHead{};
    const auto low = tuning.get("head_low"), high = tuning.get("head_high"),
               group = tuning.get("head_group");
    if (low || high || group) {
        if (!(low && high && group) || *high < *low) {
            throw std::invalid_argument(
                "fast.strips: head_low, head_high and head_group go together, head_low up to "
                "head_high");
        }
        s.head = StripHead{(*high - *low + 1) * *group, *group, *low};  // at most 2^24
    }
    s.sides_first = tuning.get("sides_first").value_or(1) != 0;
    s.dp4a = tuning.get("dp4a").value_or(1) != 0;
    return s;
}

namespace {

// Whether u8 outputs finish with store_samples_magic (vector_store.cuh:
// full-rate FFMA, FMNMX and PRMT) where it is exact for the job
// (BandGrid::magic_finish), instead of the conversion instructions.
constexpr bool kStripsMagicFinish = true;

// Whether window sample `w` is read by any output: the rest of the
// neighbours' vectors is neither read nor converted.
template <int Side, int C, typename In, int VB>
__device__ constexpr bool window_sample_used(int w) {
    using B = Band<Side, C, In, VB>;
    return w >= B::kFirst && w < B::kFirst + B::S + 2 * B::kHalo;
}
template <int Side, int C, typename In, int VB>
__device__ constexpr bool window_word_used(int word) {
    constexpr int per_word = 4 / static_cast<int>(sizeof(In));
    for (int i = 0; i < per_word; ++i) {
        if (window_sample_used<Side, C, In, VB>(word * per_word + i)) return true;
    }
    return false;
}

// Whether outside_column's closed forms hold for a job in vectors of S
// samples: the row is wider than the furthest any lane reaches past its
// ends (5 vectors). With width > S only, the lanes furthest right on a gray
// image of S to 2 S pixels would take wrap's x - width past the row (into
// its padding, uninitialised).
template <int S>
__device__ __forceinline__ bool closed_forms_hold(const DeviceJob& job) {
    return job.src_width > 5 * S;
}

// The S samples at k...k+S-1 of input row y, some of them outside the row,
// through the border policy. Out of line: only lanes at the image's sides
// take it, and the row loop stays small. In 32-bit arithmetic (strips_refusal
// keeps a row's samples under 2^30): with 64-bit divisions and
// border_index a sample, the bands at the sides take several times the
// others' time and hold up the kernel's end.
template <typename In, int C, typename Vec>
__device__ __noinline__ Vec rebuild_vector(const DeviceJob& job, std::int64_t k, std::int64_t y,
                                           In constant) {
    constexpr int S = static_cast<int>(sizeof(Vec) / sizeof(In));
    alignas(16) In values[S];
    const In* row = reinterpret_cast<const In*>(job.src + y * job.src_pitch);
    const bool near = closed_forms_hold<S>(job);
#pragma unroll
    for (int q = 0; q < S; ++q) {
        const int at = rebuilt_sample<C>(job, static_cast<int>(k) + q, near);
        values[q] = at < 0 ? constant : row[at];
    }
    return *reinterpret_cast<const Vec*>(values);
}

// The same vector for float samples, copied into its slot a sample at a
// time by cp.async, in the row's commit group: the lane goes on without
// waiting for the loads. rebuild_vector's loads made the side bands' warps
// wait a load's latency every row (f32 3x3: 6% of the instructions, 23% of
// the stall samples under ncu).
template <int C, typename Vec>
__device__ __noinline__ void rebuild_vector_async(const DeviceJob& job, std::int64_t k,
                                                  std::int64_t y, float constant, Vec* slot) {
    constexpr int S = static_cast<int>(sizeof(Vec) / sizeof(float));
    const float* row = reinterpret_cast<const float*>(job.src + y * job.src_pitch);
    float* into = reinterpret_cast<float*>(slot);
    const bool near = closed_forms_hold<S>(job);
#pragma unroll
    for (int q = 0; q < S; ++q) {
        const int at = rebuilt_sample<C>(job, static_cast<int>(k) + q, near);
        if (at < 0) into[q] = constant;
        else __pipeline_memcpy_async(into + q, row + at, sizeof(float));
    }
}

// u8 lanes at the row's ends under a border that reflects or repeats the
// row's own samples take them from the ring row the warp's other lanes
// copied, once it is in: ring_sources holds, for each of the lane's 16
// samples, its index in the ring row (lane l's vector at 16 l ...), or
// kRingConstant for the constant border. Against rebuild_vector this costs
// no global loads that the warp waits for and no border arithmetic a row
// (H100, RGB u8 edge: 4000x3000 in 36.9 us against 45.2, 780x585 in 14.7
// against 24.2).
constexpr std::uint16_t kRingConstant = 0xffff;
__device__ __noinline__ void rebuild_from_ring(uint4* ring_row, const std::uint16_t* ring_sources,
                                               std::uint8_t constant, int lane) {
    const auto* samples = reinterpret_cast<const std::uint8_t*>(ring_row);
    unsigned int words[4];
#pragma unroll
    for (int w = 0; w < 4; ++w) {
        unsigned int b[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const std::uint16_t at = ring_sources[4 * w + i];
            b[i] = at == kRingConstant ? constant : samples[at];
        }
        words[w] =
            __byte_perm(__byte_perm(b[0], b[1], 0x0040), __byte_perm(b[2], b[3], 0x0040), 0x5410);
    }
    ring_row[lane] = make_uint4(words[0], words[1], words[2], words[3]);
}

// A vector of the border's constant value.
__device__ __forceinline__ unsigned int splat_word(std::uint8_t v) { return 0x01010101u * v; }
__device__ __forceinline__ unsigned int splat_word(float v) { return __float_as_uint(v); }
template <typename Vec, typename In>
__device__ __forceinline__ Vec splat_vector(In v) {
    const unsigned int w = splat_word(v);
    if constexpr (sizeof(Vec) == 16) return make_uint4(w, w, w, w);
    else return make_uint2(w, w);
}
template <typename Vec>
__device__ __forceinline__ Vec zero_vector() {
    if constexpr (sizeof(Vec) == 16) return make_uint4(0, 0, 0, 0);
    else return make_uint2(0, 0);
}

__device__ __forceinline__ unsigned int word_of(const uint4& v, int i) {
    return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;  // i is a constant
}
__device__ __forceinline__ unsigned int word_of(const uint2& v, int i) {
    return i == 0 ? v.x : v.y;
}

// Sample i of a window word, as a float (see fast.cu's unpack for the
// byte trick: one PRMT and one FADD).
template <typename In>
__device__ __forceinline__ float sample_of(unsigned int word, int i) {
    if constexpr (sizeof(In) == 1) {
        return __uint_as_float(__byte_perm(word, 0x4B000000u, 0x7440u + i)) - 8388608.0f;
    } else {
        return __uint_as_float(word);
    }
}

// Output row y of this lane (samples k...k+S-1) the slow way: a kept
// alpha, a vector past the row's end, or an integer finish the one-FFMA
// path cannot round exactly. Out of line, so that the row loop's code stays
// small: the lanes and jobs that take it are few.
template <int C, typename In, int S>
__device__ __noinline__ void store_row_slow(const DeviceJob& job, std::int64_t k, std::int64_t y,
                                            std::int64_t row_samples, Sums<S> acc) {
    const bool keep_alpha = C == 4 && job.filtered_channels == 3;
    std::byte* out_row = job.dst + y * job.dst_pitch;
    const In* src_row = reinterpret_cast<const In*>(job.src + y * job.src_pitch);
    float values[S];
#pragma unroll
    for (int s = 0; s < S; ++s) {
        values[s] = finish_value(acc.v[s], job.scale, job.delta, job.take_abs);
        // A kept alpha: channel 3 of every pixel (k is a multiple of 4).
        if (keep_alpha && s % 4 == 3 && k + s < row_samples) {
            values[s] = static_cast<float>(src_row[k + s]);
        }
    }
    if (k + S <= row_samples) {
        store_samples_in<S>(job.out_depth, out_row, k, values);
    } else {
        for (int s = 0; s < S && k + s < row_samples; ++s) {
            store_output(job, (k + s) / C, y, static_cast<int>((k + s) % C), values[s]);
        }
    }
}

// Output row y of this lane, the common way: a whole vector in the input's
// own depth, no kept alpha, u8 through the one-FFMA finish
// (vector_store.cuh). Other output depths take store_row_slow, so that the
// loop holds one finish, not three.
template <typename In, int S>
__device__ __forceinline__ void store_row_fast(const DeviceJob& job, std::int64_t k, std::int64_t y,
                                               const float (&acc)[S]) {
    std::byte* out = job.dst + y * job.dst_pitch + k * static_cast<std::int64_t>(sizeof(In));
    if constexpr (sizeof(In) == 1) {
        store_samples_magic<std::uint8_t, S>(out, acc, job.scale, job.delta, job.take_abs);
    } else {
        float values[S];
#pragma unroll
        for (int s = 0; s < S; ++s) {
            values[s] = finish_value(acc[s], job.scale, job.delta, job.take_abs);
        }
        store_samples<float, S>(out, values);
    }
}

// The same, for the integer path's sums: clamped as they are where they
// are the outputs (BandGrid::integer_finish: abs, then cvt.pack.sat, one
// for two samples), else made floats exactly by the rounding magic's bits
// (|sum| < 2^22: at most 255 * 128 * 49) for the float finish.
template <int S>
__device__ __forceinline__ void store_row_fast(const DeviceJob& job, std::int64_t k, std::int64_t y,
                                               const int (&acc)[S], bool integer_finish) {
    std::byte* out = job.dst + y * job.dst_pitch + k;
    if (integer_finish) {
        alignas(16) unsigned int words[S / 4];
        if (job.take_abs) {  // one branch for the vector, not a select a sample
#pragma unroll
            for (int w = 0; w < S / 4; ++w) {
                words[w] = pack_saturated_u8(abs(acc[4 * w]), abs(acc[4 * w + 1]),
                                             abs(acc[4 * w + 2]), abs(acc[4 * w + 3]));
            }
        } else {
#pragma unroll
            for (int w = 0; w < S / 4; ++w) {
                words[w] =
                    pack_saturated_u8(acc[4 * w], acc[4 * w + 1], acc[4 * w + 2], acc[4 * w + 3]);
            }
        }
        store_vector<S>(out, words);
    } else {
        float sums[S];
#pragma unroll
        for (int s = 0; s < S; ++s) {
            sums[s] = __int_as_float(acc[s] + __float_as_int(kRoundingMagic)) - kRoundingMagic;
        }
        store_samples_magic<std::uint8_t, S>(out, sums, job.scale, job.delta, job.take_abs);
    }
}

// Band i of the launch order, as (across, down): the side columns first
// (sides_first_at): their warps take longest, so they start first. Row by
// row instead (the tuning parameter sides_first=0) is 6-32% slower on an H100,
// and of five other orders only those that start with the side columns
// come within 4%.
__device__ __forceinline__ int2 band_at(int i, int across, int down, bool sides_first) {
    if (!sides_first) return make_int2(i % across, i / across);
    return sides_first_at(i, across, down);
}

// Row of bands j of the head: its first image row and its height. Out of
// line, so that the bands below the head (most of them) carry none of its
// divisions: worked out inline for every band, they cost jobs without a
// head 1-4% on an H100.
__device__ __noinline__ int2 head_band(StripHead head, int j) {
    return make_int2(static_cast<int>(head.start(j)), head.height(j));
}

// Blocks an SM at least for each kernel (__launch_bounds__), which caps its
// registers.
template <int Side, typename In, bool Integer>
constexpr int strips_min_blocks() {
    if constexpr (sizeof(In) == 1 && Side == 3) return kStrips3x3U8MinBlocks;
    return Integer ? kStripsIntMinBlocks : kStripsMinBlocks;
}

// Integer: the integer path (u8 input, integer taps; see dp4a_u8_s8).
template <int Side, int C, typename In, int VB, bool Integer>
__global__ void __launch_bounds__(kThreads, strips_min_blocks<Side, In, Integer>())
    strips_kernel(const __grid_constant__ DeviceJob job, BandGrid bands) {
    static_assert(!Integer || sizeof(In) == 1, "the integer path reads u8 samples");
    using Sum = std::conditional_t<Integer, int, float>;
    using B = Band<Side, C, In, VB>;
    using Vec = typename B::Vec;
    constexpr int kWords = B::kWords;
    constexpr int S = B::S;
    constexpr int kHv = B::kHaloVectors;

    const int band =
        static_cast<int>(blockIdx.x) * kWarpsPerBlock + static_cast<int>(threadIdx.x) / 32;
    if (band >= bands.count) return;  // whole warps: the warp syncs below see all 32 lanes
    const int lane = static_cast<int>(threadIdx.x) % 32;
    const std::int64_t row_samples = job.src_width * C;
    // This lane's vector: samples k ... k + S - 1 of every row it reads.
    const int2 at = band_at(band, bands.across, bands.count / bands.across, bands.sides_first);
    const std::int64_t k = static_cast<std::int64_t>(at.x) * B::kOutputSamples +
                           static_cast<std::int64_t>(lane - kHv) * S;
    // Below the head in one multiply-add; the head's divisions out of line.
    std::int64_t y0 =
        bands.head_end + static_cast<std::int64_t>(at.y - bands.head.count) * bands.rows;
    int band_rows = bands.rows;
    if (at.y < bands.head.count) {
        const int2 start_height = head_band(bands.head, at.y);
        y0 = start_height.x;
        band_rows = start_height.y;
    }
    // The band's output rows, the last band's cut at the image's bottom, and
    // the input rows they read.
    const int out_rows =
        static_cast<int>(job.src_height - y0 < band_rows ? job.src_height - y0 : band_rows);
    const int in_rows = out_rows + Side - 1;
    const bool inside = k >= 0 && k + S <= row_samples;
    // Vectors past the row's end that no output reads stay zero.
    const bool rebuilt = !inside && k < row_samples + kHv * S;
    const bool writes = lane >= kHv && lane < 32 - kHv && k < row_samples;
    const bool keep_alpha = C == 4 && job.filtered_channels == 3;
    const bool fast_store = k + S <= row_samples && !keep_alpha &&
                            (sizeof(In) == 1
                                 ? job.out_depth == Depth::u8 &&
                                       (bands.magic_finish || (Integer && bands.integer_finish))
                                 : job.out_depth == Depth::f32);
    const In constant = static_cast<In>(job.border_value);

    // Ring row r of this warp: input row y0 - Side/2 + r, a vector a lane.
    constexpr int kAhead = B::kAhead;
    static_assert((kAhead & (kAhead - 1)) == 0, "a ring of a power of two rows");
    __shared__ Vec ring[kWarpsPerBlock][kAhead][32];
    Vec(*my_ring)[32] = ring[threadIdx.x / 32];

    // On u8, a lane at the row's ends takes its samples from the ring row
    // (rebuild_from_ring) where every one of them lies in the row and
    // within the warp's 32 vectors: reflect101, reflect and replicate on
    // rows wider than the filter's reach, and the constant border. Where
    // some lane's do not (wrap, narrow rows), the warp's lanes at the
    // row's ends rebuild from global memory. The lane that holds the row's
    // last samples and some past it copies its whole vector first: the
    // bytes past the row, up to its pitch, are initialised (DeviceJob).
    // Only where it is faster on an H100: u8 in 16-byte vectors (3x3). f32
    // lanes copy their samples by cp.async (rebuild_vector_async), 1-3%
    // faster there than the ring, and u8 in 8-byte vectors (5x5, 7x7) are
    // 1-4% slower from the ring.
    constexpr bool kRingRebuild = sizeof(In) == 1 && VB == 16;  // u8 3x3 (launch_side)
    static_assert(!kRingRebuild || Side == 3, "the ring's rebuild was measured on u8 3x3 only");
    constexpr int kSourceLanes = kRingRebuild ? 32 : 1;
    __shared__ std::uint16_t ring_sources[kWarpsPerBlock][kSourceLanes][S];
    std::uint16_t* my_sources = ring_sources[threadIdx.x / 32][kRingRebuild ? lane : 0];
    const bool partial = k < row_samples && k + S > row_samples;
    bool sources_in_ring = true;
    if (kRingRebuild && rebuilt) {
        const bool near = closed_forms_hold<S>(job);
        const std::int64_t lane0 = k - static_cast<std::int64_t>(lane) * S;  // ring row's sample 0
        for (int q = 0; q < S; ++q) {
            const int at = rebuilt_sample<C>(job, static_cast<int>(k) + q, near);
            const std::int64_t in_ring = at - lane0;
            if (at < 0) {
                my_sources[q] = kRingConstant;
            } else if (in_ring >= 0 && in_ring < 32 * S) {
                my_sources[q] = static_cast<std::uint16_t>(in_ring);
            } else {
                sources_in_ring = false;
            }
        }
    }
    const bool from_ring = kRingRebuild && __all_sync(0xffffffffu, sources_in_ring) && rebuilt;
    const bool warp_from_ring = kRingRebuild && __any_sync(0xffffffffu, from_ring);

    Sum acc[Side][S];
#pragma unroll
    for (int slot = 0; slot < Side; ++slot) {
#pragma unroll
        for (int s = 0; s < S; ++s) acc[slot][s] = 0;
    }

    const std::byte* column = job.src + k * static_cast<std::int64_t>(sizeof(In));
    auto row_of = [&](int r) {  // input row y0 - Side/2 + r through the border policy (uniform)
        return image_row(job, y0 - Side / 2 + r);
    };
    // The warp's ring of kAhead input rows in shared memory (my_ring): row
    // r goes to slot r % kAhead through cp.async, kAhead rows before it is
    // used, so the copies in flight hold no registers (a ring of registers
    // turned by moves would not overlap: a move waits for its load).
    auto issue = [&](int r) {  // row r's vector to its slot; a commit group each row, even empty
        if (r < in_rows) {
            Vec* slot = &my_ring[r & (kAhead - 1)][lane];
            const std::int64_t y = row_of(r);
            if (y == kBorderConstant) {
                *slot = splat_vector<Vec>(constant);
            } else if (inside || (from_ring && partial)) {
                __pipeline_memcpy_async(slot, column + y * job.src_pitch, sizeof(Vec));
            } else if (from_ring) {
                // Filled from the ring row once it is in (rebuild_from_ring).
            } else if (rebuilt) {
                if constexpr (std::is_same_v<In, float>) {
                    rebuild_vector_async<C>(job, k, y, constant, slot);
                } else {
                    *slot = rebuild_vector<In, C, Vec>(job, k, y, constant);
                }
            } else {
                *slot = zero_vector<Vec>();
            }
        }
        __pipeline_commit();
    };
#pragma unroll
    for (int a = 0; a < kAhead; ++a) issue(a);

        // The loop's body is one row, and the accumulator ring turns by moving
        // registers down a slot a row: unrolled further (a turn of Side rows,
        // or the band's rows) the code outgrows the instruction cache, and warps
        // wait on instruction fetches most of their time (ncu: 4.1 cycles of
        // every 6.5 for 3 rows a body, 15.7 of 20.3 for the band's).
#pragma unroll 1
    for (int r = 0; r < in_rows; ++r) {
        // Row r's group is done once at most kAhead - 1 younger ones are
        // pending; the other lanes' copies are seen after the warp's sync.
        __pipeline_wait_prior(kAhead - 1);
        __syncwarp();
        if constexpr (kRingRebuild) {
            if (warp_from_ring) {  // uniform: a warp at the image's left or right side
                // The partial lane first: lanes past it may read its samples.
                Vec* ring_row = my_ring[r & (kAhead - 1)];
                if (from_ring && partial) rebuild_from_ring(ring_row, my_sources, constant, lane);
                __syncwarp();
                if (from_ring && !partial) rebuild_from_ring(ring_row, my_sources, constant, lane);
                __syncwarp();
            }
        }
        const Vec* row = my_ring[r & (kAhead - 1)];
        const Vec mine = row[lane];

        // The window: vectors of lanes lane - hv ... lane + hv, as words
        // (lanes past either end of the warp take their own: they write
        // nothing).
        constexpr int kWindowWords = (2 * kHv + 1) * kWords;
        unsigned int words[kWindowWords];
#pragma unroll
        for (int word = 0; word < kWindowWords; ++word) {
            if (!window_word_used<Side, C, In, VB>(word)) continue;  // resolved at compile time
            const int from = word / kWords - kHv;                    // lane offset
            words[word] = word_of(mine, word % kWords);
            if (from != 0) {
                const int other = min(max(lane + from, 0), 31);
                words[word] =
                    reinterpret_cast<const unsigned int*>(row)[other * kWords + word % kWords];
            }
        }
        // Every lane has read the slot: row r + kAhead may take it.
        __syncwarp();
        issue(r + kAhead);

        // Slot t holds output row r - (Side - 1) + t, so row r adds filter
        // row j into slot Side - 1 - j. Output rows before the band's first
        // or past its last take sums too, never stored: that keeps the body
        // free of branches.
        if constexpr (Integer) {
            // Each output's samples under a group of 4 filter columns as one
            // word, the same for every filter row.
            unsigned int packed[kDp4aGroups][S];
#pragma unroll
            for (int g = 0; g * 4 < Side; ++g) {
#pragma unroll
                for (int s = 0; s < S; ++s) {
                    packed[g][s] =
                        gather_bytes<C>(words, B::kFirst + s + 4 * g * C, min(4, Side - 4 * g));
                }
            }
#pragma unroll
            for (int j = 0; j < Side; ++j) {
#pragma unroll
                for (int g = 0; g * 4 < Side; ++g) {
                    const int taps = c_dp4a_taps[j * kDp4aGroups + g];
#pragma unroll
                    for (int s = 0; s < S; ++s) {
                        acc[Side - 1 - j][s] = dp4a_u8_s8(packed[g][s], taps, acc[Side - 1 - j][s]);
                    }
                }
            }
        } else {
            float window[B::kWindow];
#pragma unroll
            for (int word = 0; word < kWindowWords; ++word) {
                if (!window_word_used<Side, C, In, VB>(word)) continue;
                constexpr int per_word = 4 / static_cast<int>(sizeof(In));
#pragma unroll
                for (int i = 0; i < per_word; ++i) {
                    window[word * per_word + i] = sample_of<In>(words[word], i);
                }
            }
#pragma unroll
            for (int j = 0; j < Side; ++j) {
#pragma unroll
                for (int i = 0; i < Side; ++i) {
                    const float tap = c_taps[j * Side + i];
#pragma unroll
                    for (int s = 0; s < S; ++s) {
                        acc[Side - 1 - j][s] += tap * window[B::kFirst + s + i * C];
                    }
                }
            }
        }

        // Output row r - Side + 1, in slot 0, has all its rows.
        const int done = r - (Side - 1);
        if (done >= 0 && writes) {
            if (fast_store) {
                if constexpr (Integer) {
                    store_row_fast<S>(job, k, y0 + done, acc[0], bands.integer_finish);
                } else {
                    store_row_fast<In, S>(job, k, y0 + done, acc[0]);
                }
            } else {
                Sums<S> sums;  // exact: |sum| < 2^24
#pragma unroll
                for (int s = 0; s < S; ++s) sums.v[s] = static_cast<float>(acc[0][s]);
                store_row_slow<C, In, S>(job, k, y0 + done, row_samples, sums);
            }
        }
#pragma unroll
        for (int t = 0; t + 1 < Side; ++t) {
#pragma unroll
            for (int s = 0; s < S; ++s) acc[t][s] = acc[t + 1][s];
        }
#pragma unroll
        for (int s = 0; s < S; ++s) acc[Side - 1][s] = 0;
    }
}

template <int Side, int C, typename In, int VB, bool Integer>
void launch_one(const DeviceJob& job, const StripSettings& settings, cudaStream_t stream) {
    using B = Band<Side, C, In, VB>;
    const std::int64_t row_samples = job.src_width * C;
    BandGrid bands;
    const std::int64_t across = (row_samples + B::kOutputSamples - 1) / B::kOutputSamples;
    // Taller bands where the count would pass a 32-bit band index.
    std::int64_t rows = settings.band_rows > 0 ? settings.band_rows
                                               : strips_band_rows(across, job.src_height, Side,
                                                                  std::is_same_v<In, float>);
    rows = std::max(rows, (across * job.src_height + kMostBands - 1) / kMostBands);
    bands.rows = static_cast<int>(std::min<std::int64_t>(rows, job.src_height));
    bands.across = static_cast<int>(across);
    // The warps that run at once, for the head: asked once a kernel a device.
    static PerDevice<std::int64_t> resident_on;
    const std::int64_t resident = resident_on.get([&] {
        return std::int64_t{kWarpsPerBlock} *
               resident_blocks(
                   reinterpret_cast<const void*>(&strips_kernel<Side, C, In, VB, Integer>),
                   kThreads, 0);
    });
    const StripHead head = settings.head ? *settings.head
                                         : strips_head(across, job.src_height, Side, bands.rows,
                                                       std::is_same_v<In, float>, resident);
    bands.head = fitted_head(head, across, job.src_height, bands.rows);
    bands.head_end = bands.head.end();
    bands.count =
        static_cast<int>(strips_band_count(across, job.src_height, bands.rows, bands.head));
    // delta + magic must be a float for the one-rounding finish (and delta
    // small enough that the double sum itself is exact).
    const double delta_magic = static_cast<double>(job.delta) + kRoundingMagic;
    bands.magic_finish = kStripsMagicFinish && std::fabs(job.delta) < 4194304.0f &&
                         static_cast<double>(static_cast<float>(delta_magic)) == delta_magic;
    bands.integer_finish = Integer && job.scale == 1.0f && job.delta == 0.0f;
    bands.sides_first = settings.sides_first;
    const unsigned int blocks = (bands.count + kWarpsPerBlock - 1) / kWarpsPerBlock;
    strips_kernel<Side, C, In, VB, Integer><<<blocks, kThreads, 0, stream>>>(job, bands);
}

template <typename In, int C, bool Integer>
bool launch_side(const DeviceJob& job, const StripSettings& settings, cudaStream_t stream) {
    // u8 from 5x5 on in 8-byte vectors: 5 accumulator rows of 16 samples
    // spill (800 bytes and more).
    constexpr int kWide = sizeof(In) == 1 ? 8 : 16;
    switch (job.filter_width) {
        case 3: launch_one<3, C, In, 16, Integer>(job, settings, stream); return true;
        case 5: launch_one<5, C, In, kWide, Integer>(job, settings, stream); return true;
        case 7: launch_one<7, C, In, kWide, Integer>(job, settings, stream); return true;
        default: return false;
    }
}

template <typename In, bool Integer = false>
bool launch_channels(const DeviceJob& job, const StripSettings& settings, cudaStream_t stream) {
    switch (job.channels) {
        case 1: return launch_side<In, 1, Integer>(job, settings, stream);
        case 3: return launch_side<In, 3, Integer>(job, settings, stream);
        case 4: return launch_side<In, 4, Integer>(job, settings, stream);
        default: return false;
    }
}

}  // namespace

std::string strips_refusal(const DeviceJob& job) {
    const int side = job.filter_width;
    if (side != job.filter_height || (side != 3 && side != 5 && side != 7)) {
        return fmt::format("fast.strips takes 3x3, 5x5 and 7x7 filters; this one is {}x{}", side,
                           job.filter_height);
    }
    if (job.origin_x != -(side / 2) || job.origin_y != -(side / 2)) {
        return "fast.strips needs the anchor at the filter's centre";
    }
    if (job.border == BorderMode::valid) return "fast.strips does not do the valid border";
    if (job.in_depth != Depth::u8 && job.in_depth != Depth::f32) {
        return "fast.strips reads u8 and f32, not u16";
    }
    if (job.channels != 1 && job.channels != 3 && job.channels != 4) {
        return "fast.strips takes 1, 3 and 4 channels";
    }
    // A u8 vector cannot hold a constant border value that is not a u8.
    if (job.in_depth == Depth::u8 && !border_fits_u8(job.border, job.border_value)) {
        return "fast.strips takes a u8 image's constant border only as a whole u8 (0 to 255)";
    }
    // Sample indices within a row are 32-bit (rebuild_vector); band indices
    // too (launch_one makes bands taller to keep them so).
    if (job.src_width * job.channels >= (std::int64_t{1} << 30)) {
        return "fast.strips takes rows of fewer than 2^30 samples";
    }
    return {};
}

std::vector<std::int32_t> strips_dp4a_words(const std::vector<double>& taps, int side) {
    if (side < 1 || side > kLargestSide ||
        taps.size() != static_cast<std::size_t>(side) * static_cast<std::size_t>(side)) {
        return {};
    }
    std::vector<std::int32_t> words(static_cast<std::size_t>(side) * kDp4aGroups, 0);
    for (int j = 0; j < side; ++j) {
        for (int i = 0; i < side; ++i) {
            // The device holds the taps as floats: that value must be the integer.
            const double tap = static_cast<float>(taps[static_cast<std::size_t>(j) * side + i]);
            if (!(tap >= -128.0 && tap <= 127.0) || tap != std::floor(tap)) return {};
            const auto byte = static_cast<std::uint32_t>(static_cast<std::int32_t>(tap) & 0xff);
            auto& word = words[static_cast<std::size_t>(j) * kDp4aGroups + i / 4];
            word =
                static_cast<std::int32_t>(static_cast<std::uint32_t>(word) | byte << (8 * (i % 4)));
        }
    }
    return words;
}

StripPlan strips_prepare(const Job& job, const DeviceJob& device_job, const StripSettings& settings,
                         cudaStream_t stream) {
    StripPlan plan;
    plan.settings = settings;
    if (device_job.in_depth == Depth::u8 && settings.dp4a) {
        plan.dp4a_words = strips_dp4a_words(job.params.filter.taps, device_job.filter_width);
    }
    if (plan.integer()) {
        CUDA_CHECK(cudaMemcpyToSymbolAsync(c_dp4a_taps, plan.dp4a_words.data(),
                                           plan.dp4a_words.size() * sizeof(std::int32_t), 0,
                                           cudaMemcpyHostToDevice, stream));
    } else {
        copy_taps_to_constant(c_taps, device_job, stream);
    }
    return plan;
}

void strips_launch(const DeviceJob& job, const StripPlan& plan, cudaStream_t stream) {
    bool launched = false;
    const StripSettings& s = plan.settings;
    if (plan.integer()) launched = launch_channels<std::uint8_t, true>(job, s, stream);
    else if (job.in_depth == Depth::u8) launched = launch_channels<std::uint8_t>(job, s, stream);
    else launched = launch_channels<float>(job, s, stream);
    if (!launched) throw CudaError("fast: the strip path was asked for a job it does not take");
}

}  // namespace cudaconv
