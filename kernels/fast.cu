// fast: the project's own direct kernel, built to run at the memory floor
// on Hopper. What it does differently from the tutorial ladder:
//  - it reads and writes the image's own depth and interleaved layout (u8
//    RGB stays u8: 2 bytes of traffic per sample, not 8 as in a float copy);
//  - every thread owns one 16-byte vector of output samples in each of R
//    rows: it loads 16-byte vectors of input straight from global memory
//    (the halo of its neighbours comes through L1), keeps a sliding window
//    of R accumulator rows in registers, and stores 16-byte vectors;
//  - interleaved channels are one row of samples whose taps sit C samples
//    apart, so the channel count, filter size and sample type are template
//    parameters and every tap is an immediate offset into registers, its
//    weight an immediate operand from __constant__ memory.
// Threads whose window leaves the image take a slow path through the border
// policy (load_bordered), so every border mode is exact. Jobs outside its
// instantiations (even or non-square sizes, an anchor off centre, `valid`,
// u16 input) are refused with the reason, and
// `auto` then takes the next variant.
#include <cuda_runtime.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

#include "kernels/cuda_backend.hpp"
#include "kernels/cuda_check.hpp"
#include "kernels/cuda_registry.hpp"
#include "kernels/device_common.cuh"

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
// 32 threads across: a warp covers 512 contiguous bytes of a row; 8 warps
// down share their rows' halos through L1.
constexpr int kBlockX = 32;
#ifndef CUDACONV_FAST_BLOCK_Y  // overridable for tuning sweeps (docs/PERFORMANCE.md)
#define CUDACONV_FAST_BLOCK_Y 8
#endif
constexpr int kBlockY = CUDACONV_FAST_BLOCK_Y;
constexpr int kThreads = kBlockX * kBlockY;
// Two blocks an SM (16 warps) at least: caps registers at 128 a thread;
// left alone the compiler took up to 254 to hoist loads, leaving 8 warps
// to hide memory latency.
#ifndef CUDACONV_FAST_U8_MIN_BLOCKS
#define CUDACONV_FAST_U8_MIN_BLOCKS 2
#endif
#ifndef CUDACONV_FAST_F32_MIN_BLOCKS
#define CUDACONV_FAST_F32_MIN_BLOCKS 2
#endif

__constant__ float c_taps[kMaxTaps];

template <typename In>
CC_HD constexpr int samples_per_vector() {
    return kVectorBytes / static_cast<int>(sizeof(In));
}

// Output rows per thread: each input row loaded serves up to R of them,
// and R x S accumulators live in registers. 4 rows keep u8 threads (16
// samples) under 128 registers, so two 256-thread blocks fit an SM; f32
// threads (4 samples) take 8, as many loads per output with a quarter of
// the registers.
#ifndef CUDACONV_FAST_U8_ROWS
#define CUDACONV_FAST_U8_ROWS 4
#endif
#ifndef CUDACONV_FAST_F32_ROWS
#define CUDACONV_FAST_F32_ROWS 8
#endif
template <int Side, typename In>
CC_HD constexpr int rows_per_thread() {
    return sizeof(In) == 1 ? CUDACONV_FAST_U8_ROWS : CUDACONV_FAST_F32_ROWS;
}

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

// Samples k_first ... k_first + count - 1 of input row y (any of them may lie
// outside the image) through the border policy, into out. Only threads at
// the image's edges call it, once a row; kept out of line so that the
// unrolled fast path stays small and its registers its own (inlined per
// sample, it multiplied build time and spilled the accumulators).
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

template <int Bytes>
__device__ __forceinline__ void store_vector(std::byte* dst, const void* src) {
    if constexpr (Bytes % 16 == 0) {
#pragma unroll
        for (int i = 0; i < Bytes / 16; ++i) {
            reinterpret_cast<uint4*>(dst)[i] = reinterpret_cast<const uint4*>(src)[i];
        }
    } else if constexpr (Bytes == 8) {
        *reinterpret_cast<uint2*>(dst) = *reinterpret_cast<const uint2*>(src);
    } else {
        static_assert(Bytes == 4, "a vector store of 4, 8 or 16n bytes");
        *reinterpret_cast<unsigned int*>(dst) = *reinterpret_cast<const unsigned int*>(src);
    }
}

// saturate_to's rounding (half to even, NaN to 0, clamped) in one
// conversion instruction: PTX's cvt.rni to an unsigned integer already
// clamps negatives and NaN to 0, so only the top needs a min. saturate_to
// itself takes a rint, compares and a conversion per sample.
template <typename Out>
__device__ __forceinline__ Out to_output(float v) {
    if constexpr (std::is_same_v<Out, float>) return v;
    else return static_cast<Out>(min(__float2uint_rn(v), sizeof(Out) == 1 ? 255u : 65535u));
}

// S finished samples to the output depth, stored as one vector.
template <typename Out, int S>
__device__ __forceinline__ void store_samples(std::byte* dst, const float* values) {
    alignas(16) Out packed[S];
#pragma unroll
    for (int s = 0; s < S; ++s) packed[s] = to_output<Out>(values[s]);
    store_vector<S * static_cast<int>(sizeof(Out))>(dst, packed);
}

// Adds rows y0 - Side/2 ... y0 + R - 1 + Side/2 of the input, times the
// taps, into the R x S accumulators of output rows y0 ... y0 + R - 1 and
// samples k0 ... k0 + S - 1. Bordered: the window leaves the image, so
// every sample goes through the border policy.
template <int Side, int C, typename In, int R, bool Bordered>
__device__ __forceinline__ void accumulate_rows(const DeviceJob& job, std::int64_t k0,
                                                std::int64_t y0,
                                                float (&acc)[R][samples_per_vector<In>()]) {
    constexpr int S = samples_per_vector<In>();
    constexpr int kHalo = (Side / 2) * C;           // samples each side of a row
    constexpr int kHaloVectors = (kHalo + S - 1) / S;
    constexpr int kWindow = (2 * kHaloVectors + 1) * S;
    constexpr int kFirst = kHaloVectors * S - kHalo;  // window index of tap 0 of sample 0
#pragma unroll
    for (int r = 0; r < R + Side - 1; ++r) {
        const std::int64_t y = y0 - Side / 2 + r;
        float window[kWindow];
        if constexpr (!Bordered) {
            const In* row = reinterpret_cast<const In*>(job.src + y * job.src_pitch);
            const uint4* vectors = reinterpret_cast<const uint4*>(row + k0) - kHaloVectors;
#pragma unroll
            for (int v = 0; v < 2 * kHaloVectors + 1; ++v) {
                unpack<In>(__ldg(vectors + v), window + v * S);
            }
        } else {
            load_row_bordered<In>(job, k0 - kHalo, S + 2 * kHalo, y, window + kFirst);
        }
        // Input row r feeds output row o through filter row j = r - o.
#pragma unroll
        for (int o = 0; o < R; ++o) {
            const int j = r - o;
            if (j < 0 || j >= Side) continue;  // resolved at compile time
#pragma unroll
            for (int i = 0; i < Side; ++i) {
                const float tap = c_taps[j * Side + i];
#pragma unroll
                for (int s = 0; s < S; ++s) acc[o][s] += tap * window[kFirst + s + i * C];
            }
        }
    }
}

template <int Side, int C, typename In>
__global__ void __launch_bounds__(kThreads, sizeof(In) == 1 ? CUDACONV_FAST_U8_MIN_BLOCKS
                                                              : CUDACONV_FAST_F32_MIN_BLOCKS)
    fast_kernel(DeviceJob job) {
    constexpr int S = samples_per_vector<In>();
    constexpr int R = rows_per_thread<Side, In>();
    constexpr int kHaloVectors = ((Side / 2) * C + S - 1) / S;
    constexpr int kAnchor = Side / 2;

    // Device rows start 16-byte aligned (cuda_backend.cu), so vector v of a
    // row holds samples [v*S, v*S + S); the pitch padding past the last
    // sample is never read as input nor written.
    const std::int64_t row_samples = job.src_width * C;
    const std::int64_t k0 = (static_cast<std::int64_t>(blockIdx.x) * kBlockX + threadIdx.x) * S;
    const std::int64_t y0 = (static_cast<std::int64_t>(blockIdx.y) * kBlockY + threadIdx.y) * R;
    if (k0 >= row_samples || y0 >= job.src_height) return;

    // Whole vectors inside the row and rows inside the image: the fast path.
    const bool inside = k0 - kHaloVectors * S >= 0 && k0 + S + kHaloVectors * S <= row_samples &&
                        y0 - kAnchor >= 0 && y0 + R - 1 + kAnchor < job.src_height;

    float acc[R][S];
#pragma unroll
    for (int o = 0; o < R; ++o) {
#pragma unroll
        for (int s = 0; s < S; ++s) acc[o][s] = 0.0f;
    }
    // One path or the other for the whole thread, so the fast one is
    // straight-line code whose loads the compiler can issue early.
    if (inside) accumulate_rows<Side, C, In, R, false>(job, k0, y0, acc);
    else accumulate_rows<Side, C, In, R, true>(job, k0, y0, acc);

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
            // A kept alpha: channel 3 of every pixel (k0 is a multiple of 4),
            // the input's own value.
            if (keep_alpha && s % 4 == 3 && k0 + s < row_samples) {
                values[s] = static_cast<float>(
                    reinterpret_cast<const In*>(job.src + y * job.src_pitch)[k0 + s]);
            }
        }
        std::byte* out_row = job.dst + y * job.dst_pitch;
        if (whole_vector) {
            switch (job.out_depth) {
                case Depth::u8: store_samples<std::uint8_t, S>(out_row + k0, values); break;
                case Depth::u16: store_samples<std::uint16_t, S>(out_row + 2 * k0, values); break;
                case Depth::f32: store_samples<float, S>(out_row + 4 * k0, values); break;
            }
        } else {
            // The row's last, partial vector: sample by sample.
            for (int s = 0; s < S && k0 + s < row_samples; ++s) {
                const std::int64_t k = k0 + s;
                store_output(job, k / C, y, static_cast<int>(k % C), values[s]);
            }
        }
    }
}

template <int Side, int C, typename In>
void launch_one(const DeviceJob& job, cudaStream_t stream) {
    constexpr int S = samples_per_vector<In>();
    constexpr int R = rows_per_thread<Side, In>();
    const std::int64_t vectors = (job.src_width * C + S - 1) / S;
    const dim3 block(kBlockX, kBlockY);
    const dim3 grid(blocks_for(vectors, kBlockX), blocks_for((job.src_height + R - 1) / R, kBlockY));
    fast_kernel<Side, C, In><<<grid, block, 0, stream>>>(job);
}

template <int C, typename In, std::size_t... I>
bool launch_side(const DeviceJob& job, cudaStream_t stream, std::index_sequence<I...>) {
    return ((job.filter_width == kSides[I] && (launch_one<kSides[I], C, In>(job, stream), true)) ||
            ...);
}

template <typename In>
bool launch_channels(const DeviceJob& job, cudaStream_t stream) {
    constexpr auto sides = std::make_index_sequence<kSides.size()>{};
    switch (job.channels) {
        case 1: return launch_side<1, In>(job, stream, sides);
        case 3: return launch_side<3, In>(job, stream, sides);
        case 4: return launch_side<4, In>(job, stream, sides);
        default: return false;
    }
}

bool is_instantiated_side(int side) {
    for (int s : kSides) {
        if (s == side) return true;
    }
    return false;
}

// The largest grid dimension y, in blocks.
constexpr std::int64_t kMaxGridY = 65535;

class FastBackend final : public CudaBackend {
public:
    std::string_view name() const override { return "fast"; }
    std::string_view summary() const override {
        return "native depth, 16-byte vectors, sliding window in registers (odd square 3..15)";
    }

protected:
    Support check_job(const Job& job, const DeviceInfo&) const override {
        const ConvParams& p = job.params;
        const Filter& f = p.filter;
        if (f.width != f.height || !is_instantiated_side(f.width)) {
            return Support::no(fmt::format(
                "fast is built for odd square filters 3x3 to 15x15; this one is {}x{}", f.width,
                f.height));
        }
        if (p.anchor_x != f.width / 2 || p.anchor_y != f.height / 2) {
            return Support::no("fast needs the anchor at the filter's centre");
        }
        if (p.border == BorderMode::valid) return Support::no("fast does not do the valid border");
        if (job.src.depth == Depth::u16) return Support::no("fast reads u8 and f32 images, not u16");
        const int s = job.src.depth == Depth::u8 ? 16 : 4;
        const int r = s == 16 ? CUDACONV_FAST_U8_ROWS : CUDACONV_FAST_F32_ROWS;
        if ((job.src.height + r - 1) / r > kMaxGridY * kBlockY) {
            return Support::no("the image is taller than fast's grid can cover");
        }
        return Support::yes();
    }

    void prepare(const Job&, const DeviceJob& job, cudaStream_t stream) override {
        copy_taps_to_constant(c_taps, job, stream);
    }

    void launch(const DeviceJob& job, cudaStream_t stream) override {
        if (job.dst_width <= 0 || job.dst_height <= 0) return;
        const bool launched = job.in_depth == Depth::u8
                                  ? launch_channels<std::uint8_t>(job, stream)
                                  : launch_channels<float>(job, stream);
        if (!launched) {
            throw CudaError(fmt::format("fast: no instantiation for a {}x{} filter on {} channels",
                                        job.filter_width, job.filter_height, job.channels));
        }
    }
};

}  // namespace

std::unique_ptr<Backend> make_fast_backend() { return std::make_unique<FastBackend>(); }

}  // namespace cudaconv
