// The mma variant of a convolution layer (core/conv_layer.hpp): cudaconv's
// own, on the tensor cores. The convolution is an implicit matrix product:
// M output pixels by K = k_h * k_w * C_in taps, times the HWIO weights as
// they are (K by C_out). A is gathered from the input bordered as the layer
// says (a pad kernel first); each product is mma.sync m16n8k8 in TF32, as
// three products of split operands (3xTF32: hi*hi + hi*lo + lo*hi), which
// keep float32's precision; with --allow-tf32 only hi*hi. A finish kernel
// adds the bias, applies the activation and pools, in float32.
//
// Two matrix-product kernels: a pipelined one where every stage of 32 taps
// lies in one (ky, kx) of the window (C_in a multiple of 32, C_out of 4:
// VGG16 past its first layer), its tiles copied in by cp.async two stages
// ahead and K split among blocks where the tiles alone would leave SMs
// idle; and a plain one for any other shape.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "base/errors.hpp"
#include "core/border.hpp"
#include "kernels/device/device_common.cuh"
#include "kernels/device/tf32_mma.cuh"
#include "kernels/layer/bordered_input.cuh"
#include "kernels/layer/layer_mma.hpp"
#include "kernels/layer/timed_layer_runs.hpp"
#include "kernels/runtime/cuda_backend.hpp"
#include "kernels/runtime/cuda_check.hpp"
#include "kernels/runtime/cuda_resources.hpp"
#include "kernels/runtime/device_info.hpp"
#include "kernels/runtime/stream_hold.hpp"

namespace cudaconv {
namespace {

constexpr int kThreads = 128;        // 4 warps, 2 x 2 over a block's tile
constexpr int kTileM = 64;           // output pixels a block
constexpr int kTileN = 64;           // output channels a block
constexpr int kTileK = 16;           // taps a stage: two mma k-steps
constexpr int kStride = kTileM + 8;  // shared rows, padded so fragment reads miss no bank
static_assert(kTileM == kTileN, "A and B share kStride");
// Every index is 32-bit: tensors of fewer than 2^31 elements.
constexpr std::int64_t kMaxElements = (std::int64_t{1} << 31) - 1;

struct MmaDims {
    int in_height = 0, in_width = 0, in_channels = 0;
    int padded_height = 0, padded_width = 0;
    int conv_height = 0, conv_width = 0;
    int out_height = 0, out_width = 0, out_channels = 0;
    int kernel_height = 0, kernel_width = 0;
    int pad_top = 0, pad_left = 0;
    __host__ __device__ int taps() const { return kernel_height * kernel_width * in_channels; }
    __host__ __device__ int pixels() const { return conv_height * conv_width; }
};

// d += a * b from their TF32 parts: the small products first, then the
// large one (3xTF32); with kTf32Only, the large one alone.
template <bool kTf32Only>
__device__ __forceinline__ void mma_split(float (&d)[4], const float (&a_hi)[4],
                                          const float (&a_lo)[4], float b_hi0, float b_hi1,
                                          float b_lo0, float b_lo1) {
    if (!kTf32Only) {
        mma_tf32(d, a_lo, b_hi0, b_hi1);
        mma_tf32(d, a_hi, b_lo0, b_lo1);
    }
    mma_tf32(d, a_hi, b_hi0, b_hi1);
}

// One thread an element of the bordered input, (H', W', C_in).
__global__ void pad_kernel(BorderedInput bordered, unsigned int elements,
                           float* __restrict__ padded) {
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= elements) return;
    unsigned int y = 0, x = 0, c = 0;
    padded[i] = bordered_element(bordered, i, y, x, c);
}

// The convolution's sums, (conv_height, conv_width, C_out): a block a tile
// of kTileM pixels by kTileN channels, each warp 32 x 32 of it (2 x 4
// mma tiles of 16 x 8), K in stages of kTileK through shared memory, each
// operand stored split (hi, lo).
template <bool kTf32Only>
__global__ void __launch_bounds__(kThreads)
    conv_mma_kernel(const float* __restrict__ padded, const float* __restrict__ weights, MmaDims d,
                    float* __restrict__ conv) {
    __shared__ float a_hi[kTileK][kStride], a_lo[kTileK][kStride];
    __shared__ float b_hi[kTileK][kStride], b_lo[kTileK][kStride];
    const int m0 = static_cast<int>(blockIdx.x) * kTileM;
    const int n0 = static_cast<int>(blockIdx.y) * kTileN;
    const int warp = static_cast<int>(threadIdx.x) / 32;
    const int lane = static_cast<int>(threadIdx.x) % 32;
    const int group = lane / 4, quad = lane % 4;  // mma's groupID, threadID_in_group
    const int wm = (warp / 2) * 32, wn = (warp % 2) * 32;
    const int taps = d.taps(), pixels = d.pixels();
    const int per_row = d.kernel_width * d.in_channels;

    float acc[2][4][4] = {};
    for (int k0 = 0; k0 < taps; k0 += kTileK) {
        // A: kTileM pixels x kTileK taps; consecutive threads take
        // consecutive taps (consecutive input channels).
        for (int e = static_cast<int>(threadIdx.x); e < kTileM * kTileK; e += kThreads) {
            const int m = e / kTileK, k = e % kTileK;
            const int p = m0 + m, t = k0 + k;
            float v = 0.0f;
            if (p < pixels && t < taps) {
                const int y = p / d.conv_width, x = p % d.conv_width;
                const int ky = t / per_row, kx = (t % per_row) / d.in_channels;
                const int c = t % d.in_channels;
                v = padded[((y + ky) * d.padded_width + (x + kx)) * d.in_channels + c];
            }
            const float hi = tf32_rna(v);
            a_hi[k][m] = hi;
            a_lo[k][m] = tf32_rna(v - hi);
        }
        // B: kTileK taps x kTileN channels, a row of the weights each.
        for (int e = static_cast<int>(threadIdx.x); e < kTileK * kTileN; e += kThreads) {
            const int k = e / kTileN, n = e % kTileN;
            const int t = k0 + k, co = n0 + n;
            const float v = t < taps && co < d.out_channels ? weights[t * d.out_channels + co]
                                                            : 0.0f;
            const float hi = tf32_rna(v);
            b_hi[k][n] = hi;
            b_lo[k][n] = tf32_rna(v - hi);
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < kTileK; kk += 8) {
            float ah[2][4], al[2][4];
#pragma unroll
            for (int mi = 0; mi < 2; ++mi) {
                const int r = wm + mi * 16 + group;
                ah[mi][0] = a_hi[kk + quad][r];
                ah[mi][1] = a_hi[kk + quad][r + 8];
                ah[mi][2] = a_hi[kk + quad + 4][r];
                ah[mi][3] = a_hi[kk + quad + 4][r + 8];
                al[mi][0] = a_lo[kk + quad][r];
                al[mi][1] = a_lo[kk + quad][r + 8];
                al[mi][2] = a_lo[kk + quad + 4][r];
                al[mi][3] = a_lo[kk + quad + 4][r + 8];
            }
#pragma unroll
            for (int ni = 0; ni < 4; ++ni) {
                const int col = wn + ni * 8 + group;
                const float bh0 = b_hi[kk + quad][col], bh1 = b_hi[kk + quad + 4][col];
                const float bl0 = b_lo[kk + quad][col], bl1 = b_lo[kk + quad + 4][col];
#pragma unroll
                for (int mi = 0; mi < 2; ++mi) {
                    mma_split<kTf32Only>(acc[mi][ni], ah[mi], al[mi], bh0, bh1, bl0, bl1);
                }
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int mi = 0; mi < 2; ++mi) {
#pragma unroll
        for (int ni = 0; ni < 4; ++ni) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {  // rows group and group + 8
                const int p = m0 + wm + mi * 16 + group + 8 * h;
                const int co = n0 + wn + ni * 8 + 2 * quad;
                if (p >= pixels) continue;
                if (co < d.out_channels) conv[p * d.out_channels + co] = acc[mi][ni][2 * h];
                if (co + 1 < d.out_channels) {
                    conv[p * d.out_channels + co + 1] = acc[mi][ni][2 * h + 1];
                }
            }
        }
    }
}

// The pipelined product: blocks of 128 pixels by kTileN channels (8 warps,
// 4 along M by 2 along N, each 32 by kTileN / 2), taps blockIdx.z *
// k_per_split on in stages of 32, each copied into shared memory by cp.async
// kStages - 1 stages before it is used. Operands are stored as they are and
// split into TF32 hi and lo as fragments are read. Writes its split's
// partial sums, plane blockIdx.z of `conv`.
namespace pipelined {
constexpr int kThreads = 256;
constexpr int kTileM = 128;
constexpr int kTileK = 32;
constexpr int kStages = 3;
constexpr int kStrideA = kTileK + 4;  // A as [pixel][tap]: fragment reads meet 32 banks
template <int kTileN>
constexpr int kStrideB = kTileN + 8;  // B as [tap][channel]: likewise
template <int kTileN>
constexpr std::size_t shared_bytes() {
    return sizeof(float) * kStages * (kTileM * kStrideA + kTileK * kStrideB<kTileN>);
}
}  // namespace pipelined

// 16 bytes from global to shared memory, in flight until cp_async_wait;
// zeros where !valid (nothing is read then).
__device__ __forceinline__ void cp_async16(float* shared, const float* global, bool valid) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    const auto address = static_cast<unsigned int>(__cvta_generic_to_shared(shared));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(address), "l"(global),
                 "r"(valid ? 16 : 0));
#else
    __trap();
#endif
}

__device__ __forceinline__ void cp_async_commit() {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::);
#endif
}

// Waits until at most `kPending` committed groups are still in flight.
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
#endif
}

__device__ __forceinline__ void split_tf32(float v, float& hi, float& lo) {
    hi = tf32_rna(v);
    lo = tf32_rna(v - hi);
}

template <int kTileN, bool kTf32Only>
__global__ void __launch_bounds__(pipelined::kThreads, 2)
    conv_mma_pipelined_kernel(const float* __restrict__ padded, const float* __restrict__ weights,
                              MmaDims d, int k_per_split, float* __restrict__ conv) {
    constexpr int kStrideBN = pipelined::kStrideB<kTileN>;
    constexpr int kNi = kTileN / 16;          // mma tiles of 8 channels a warp
    extern __shared__ float4 shared_words[];  // float4: cp.async's 16-byte alignment
    float* const a_tiles = reinterpret_cast<float*>(shared_words);
    float* const b_tiles = a_tiles + pipelined::kStages * pipelined::kTileM * pipelined::kStrideA;

    const int tid = static_cast<int>(threadIdx.x);
    const int warp = tid / 32, lane = tid % 32;
    const int group = lane / 4, quad = lane % 4;  // mma's groupID, threadID_in_group
    const int wm = (warp / 2) * 32, wn = (warp % 2) * (kTileN / 2);
    const int m0 = static_cast<int>(blockIdx.x) * pipelined::kTileM;
    const int n0 = static_cast<int>(blockIdx.y) * kTileN;
    const int k_begin = static_cast<int>(blockIdx.z) * k_per_split;
    const int stages = (min(d.taps(), k_begin + k_per_split) - k_begin) / pipelined::kTileK;
    const int pixels = d.pixels(), channels = d.in_channels;

    // This thread's share of a stage: of A, 16 bytes (4 taps) of each of 4
    // pixels; of B, 16 bytes (4 channels) of kBRows rows of taps.
    constexpr int kAPixels = pipelined::kTileM * pipelined::kTileK / 4 / pipelined::kThreads;
    constexpr int kBChunksPerRow = kTileN / 4;
    constexpr int kBRowStep = pipelined::kThreads / kBChunksPerRow;
    constexpr int kBRows = pipelined::kTileK / kBRowStep;
    const int a_tap = (tid % 8) * 4;
    int a_corner[kAPixels];  // each pixel's window corner in `padded`, or -1 past the last
#pragma unroll
    for (int i = 0; i < kAPixels; ++i) {
        const int p = m0 + tid / 8 + 32 * i;
        a_corner[i] =
            p < pixels ? ((p / d.conv_width) * d.padded_width + p % d.conv_width) * channels : -1;
    }
    const int b_channel = (tid % kBChunksPerRow) * 4;
    const int b_row = tid / kBChunksPerRow;
    const bool b_valid = n0 + b_channel < d.out_channels;  // C_out is a multiple of 4

    const auto load_stage = [&](int buffer, int k0) {
        float* const a = a_tiles + buffer * pipelined::kTileM * pipelined::kStrideA;
        float* const b = b_tiles + buffer * pipelined::kTileK * kStrideBN;
        // 32 taps in one (ky, kx): channels c0 .. c0 + 31 of one input pixel.
        const int ky = k0 / (d.kernel_width * channels);
        const int rest = k0 - ky * d.kernel_width * channels;
        const int kx = rest / channels;
        const int window = (ky * d.padded_width + kx) * channels + (rest - kx * channels) + a_tap;
#pragma unroll
        for (int i = 0; i < kAPixels; ++i) {
            const bool valid = a_corner[i] >= 0;
            cp_async16(a + (tid / 8 + 32 * i) * pipelined::kStrideA + a_tap,
                       padded + (valid ? a_corner[i] + window : 0), valid);
        }
#pragma unroll
        for (int j = 0; j < kBRows; ++j) {
            const int row = b_row + j * kBRowStep;
            cp_async16(b + row * kStrideBN + b_channel,
                       weights + (b_valid ? (k0 + row) * d.out_channels + n0 + b_channel : 0),
                       b_valid);
        }
    };

    float acc[2][kNi][4] = {};
#pragma unroll
    for (int s = 0; s < pipelined::kStages - 1; ++s) {
        if (s < stages) load_stage(s, k_begin + s * pipelined::kTileK);
        cp_async_commit();
    }
    for (int it = 0; it < stages; ++it) {
        cp_async_wait<pipelined::kStages - 2>();
        // Stage `it` is in; every warp is past stage it - 1, whose buffer
        // the next copy reuses.
        __syncthreads();
        const int next = it + pipelined::kStages - 1;
        if (next < stages)
            load_stage(next % pipelined::kStages, k_begin + next * pipelined::kTileK);
        cp_async_commit();
        const float* const a =
            a_tiles + (it % pipelined::kStages) * pipelined::kTileM * pipelined::kStrideA;
        const float* const b = b_tiles + (it % pipelined::kStages) * pipelined::kTileK * kStrideBN;
#pragma unroll
        for (int kk = 0; kk < pipelined::kTileK; kk += 8) {
            float ah[2][4], al[2][4];
#pragma unroll
            for (int mi = 0; mi < 2; ++mi) {
                const float* const row =
                    a + (wm + mi * 16 + group) * pipelined::kStrideA + kk + quad;
                split_tf32(row[0], ah[mi][0], al[mi][0]);
                split_tf32(row[8 * pipelined::kStrideA], ah[mi][1], al[mi][1]);
                split_tf32(row[4], ah[mi][2], al[mi][2]);
                split_tf32(row[8 * pipelined::kStrideA + 4], ah[mi][3], al[mi][3]);
            }
#pragma unroll
            for (int ni = 0; ni < kNi; ++ni) {
                const float* const col = b + (kk + quad) * kStrideBN + wn + ni * 8 + group;
                float bh0, bl0, bh1, bl1;
                split_tf32(col[0], bh0, bl0);
                split_tf32(col[4 * kStrideBN], bh1, bl1);
#pragma unroll
                for (int mi = 0; mi < 2; ++mi) {
                    mma_split<kTf32Only>(acc[mi][ni], ah[mi], al[mi], bh0, bh1, bl0, bl1);
                }
            }
        }
    }
    cp_async_wait<0>();

    float* const partial = conv + static_cast<unsigned int>(blockIdx.z) *
                                      static_cast<unsigned int>(pixels) *
                                      static_cast<unsigned int>(d.out_channels);
#pragma unroll
    for (int mi = 0; mi < 2; ++mi) {
#pragma unroll
        for (int ni = 0; ni < kNi; ++ni) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {  // rows group and group + 8
                const int p = m0 + wm + mi * 16 + group + 8 * h;
                const int co = n0 + wn + ni * 8 + 2 * quad;  // even: co + 1 < C_out too
                if (p < pixels && co < d.out_channels) {
                    *reinterpret_cast<float2*>(partial + p * d.out_channels + co) =
                        make_float2(acc[mi][ni][2 * h], acc[mi][ni][2 * h + 1]);
                }
            }
        }
    }
}

// One thread an output element, (H_out, W_out, C_out): the bias and
// activation of one sum, or the maximum of a 2x2 block's.
__global__ void finish_kernel(const float* __restrict__ conv, int splits,
                              const float* __restrict__ bias, MmaDims d, bool relu, bool pool,
                              float* __restrict__ out) {
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    const auto channels = static_cast<unsigned int>(d.out_channels);
    const auto out_width = static_cast<unsigned int>(d.out_width);
    if (i >= static_cast<unsigned int>(d.out_height) * out_width * channels) return;
    const unsigned int co = i % channels;
    const unsigned int p = i / channels;
    const unsigned int x = p % out_width;
    const unsigned int y = p / out_width;
    const float b = bias[co];
    const unsigned int plane = static_cast<unsigned int>(d.pixels()) * channels;
    const auto at = [&](unsigned int cy, unsigned int cx) {
        // The splits' partial sums in split order, then the bias.
        const unsigned int e = (cy * static_cast<unsigned int>(d.conv_width) + cx) * channels + co;
        float v = conv[e];
        for (int z = 1; z < splits; ++z) v += conv[static_cast<unsigned int>(z) * plane + e];
        v += b;
        return relu && v < 0.0f ? 0.0f : v;
    };
    out[i] = pool ? fmaxf(fmaxf(at(2 * y, 2 * x), at(2 * y, 2 * x + 1)),
                          fmaxf(at(2 * y + 1, 2 * x), at(2 * y + 1, 2 * x + 1)))
                  : at(y, x);
}

MmaDims dims_of(const ConvLayer& layer, const LayerGeometry& g, std::int64_t height,
                std::int64_t width) {
    MmaDims d;
    d.in_height = static_cast<int>(height);
    d.in_width = static_cast<int>(width);
    d.in_channels = layer.in_channels;
    d.conv_height = static_cast<int>(g.conv_height);
    d.conv_width = static_cast<int>(g.conv_width);
    d.out_height = static_cast<int>(g.out_height);
    d.out_width = static_cast<int>(g.out_width);
    d.out_channels = layer.out_channels;
    d.kernel_height = layer.kernel_height;
    d.kernel_width = layer.kernel_width;
    d.padded_height = d.conv_height + layer.kernel_height - 1;
    d.padded_width = d.conv_width + layer.kernel_width - 1;
    d.pad_top = static_cast<int>(g.pad_top);
    d.pad_left = static_cast<int>(g.pad_left);
    return d;
}

// How a layer's product runs: which kernel, its tile width and K's splits.
struct MmaPlan {
    bool pipelined = false;
    int tile_n = 0;       // the pipelined kernel's channels a block: 64 or 128
    int splits = 1;       // blocks along K, each `k_per_split` taps
    int k_per_split = 0;  // a multiple of pipelined::kTileK
};

// What the device gives the pipelined kernel: the tile widths whose shared
// memory a block may have (128 needs 105 KiB, past compute capability 8.6
// and 8.9's 99), and each one's blocks resident on an SM.
struct PipelinedFit {
    int resident_64 = 0, resident_128 = 0;  // 0: does not fit
};

// `plan` with K split among at most `splits` blocks, none of them empty.
MmaPlan split_k(const MmaDims& d, MmaPlan plan, int splits) {
    const int stages = d.taps() / pipelined::kTileK;
    const int stages_per_split = (stages + splits - 1) / splits;
    plan.k_per_split = stages_per_split * pipelined::kTileK;
    plan.splits = (stages + stages_per_split - 1) / stages_per_split;
    return plan;
}

MmaPlan plan_of(const MmaDims& d, int multiprocessors, const PipelinedFit& fit) {
    MmaPlan plan;
    plan.k_per_split = d.taps();
    if (d.in_channels % pipelined::kTileK != 0 || d.out_channels % 4 != 0) return plan;
    if (fit.resident_64 == 0) return plan;
    plan.pipelined = true;
    plan.tile_n = d.out_channels <= 64 || fit.resident_128 == 0 ? 64 : 128;
    const int per_sm = plan.tile_n == 64 ? fit.resident_64 : fit.resident_128;
    const std::int64_t tiles = std::int64_t{blocks_for(d.pixels(), pipelined::kTileM)} *
                               blocks_for(d.out_channels, plan.tile_n);
    const int stages = d.taps() / pipelined::kTileK;
    // Where the tiles leave resident blocks' places idle, K is split among
    // blocks, none with fewer than 8 stages (the pipeline's start and end
    // would outweigh its work).
    const std::int64_t resident = std::int64_t{per_sm} * std::max(1, multiprocessors);
    const std::int64_t wanted = (resident + tiles - 1) / tiles;
    return split_k(d, plan,
                   static_cast<int>(std::clamp<std::int64_t>(wanted, 1, std::max(1, stages / 8))));
}

// Lets the kTileN-wide kernels have their shared memory, past the 48 KiB a
// kernel gets unasked, where the device's opt-in allows it (an attribute of
// the device this thread has set); their blocks resident on an SM, 0 where
// it does not fit.
template <int kTileN>
int allow_pipelined_shared_memory(int optin_bytes) {
    constexpr std::size_t bytes = pipelined::shared_bytes<kTileN>();
    if (bytes > static_cast<std::size_t>(optin_bytes)) return 0;
    for (const auto kernel :
         {conv_mma_pipelined_kernel<kTileN, false>, conv_mma_pipelined_kernel<kTileN, true>}) {
        CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(bytes)));
    }
    int resident = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &resident, conv_mma_pipelined_kernel<kTileN, false>, pipelined::kThreads, bytes));
    return resident;
}

class MmaLayer final : public LayerVariant {
public:
    std::string_view name() const override { return "mma"; }
    std::string_view summary() const override {
        return "cudaconv's own on the tensor cores: float32 results from split TF32 products";
    }
    bool uses_cuda() const override { return true; }

    std::string refusal(const ConvLayer& layer) const override {
        const DeviceProbe& probe = probe_devices();
        if (probe.devices.empty()) return probe.problem;
        if (current_device().cc_major < 8) {
            return "TF32 tensor cores need compute capability 8.0 or later";
        }
        const std::int64_t weights = std::int64_t{layer.kernel_height} * layer.kernel_width *
                                     layer.in_channels * layer.out_channels;
        if (weights > kMaxElements) return "the weights hold 2^31 values or more";
        return "";
    }

    void prepare(const ConvLayer& layer) override {
        CUDA_CHECK(cudaSetDevice(current_device().index));
        if (!stream_) {
            stream_ = std::make_unique<Stream>();
            hold_ = std::make_unique<StreamHold>();
        }
        layer_ = &layer;
        d_weights_ = device_array<float>(layer.weights.size());
        d_bias_ = device_array<float>(layer.bias.size());
        CUDA_CHECK(cudaMemcpy(d_weights_.get(), layer.weights.data(),
                              layer.weights.size() * sizeof(float), cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemcpy(d_bias_.get(), layer.bias.data(), layer.bias.size() * sizeof(float),
                              cudaMemcpyHostToDevice));
        int optin = 0;
        CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                          current_device().index));
        fit_.resident_64 = allow_pipelined_shared_memory<64>(optin);
        fit_.resident_128 = allow_pipelined_shared_memory<128>(optin);
    }

    LayerTimings run(const Tensor3& input, Tensor3& output, int warmup, int repeat,
                     const std::function<bool()>& stop) override {
        const ConvLayer& layer = *layer_;
        const LayerGeometry g = layer_geometry(layer, input.height, input.width, input.channels);
        // Every index is 32-bit: checked in 64 bits before any is made.
        const std::int64_t padded = (g.conv_height + layer.kernel_height - 1) *
                                    (g.conv_width + layer.kernel_width - 1) * layer.in_channels;
        const std::int64_t sums = g.conv_height * g.conv_width * layer.out_channels;
        if (padded > kMaxElements || sums > kMaxElements ||
            static_cast<std::int64_t>(input.data.size()) > kMaxElements) {
            throw WorkError("mma: the layer's tensors hold 2^31 values or more");
        }
        const MmaDims d = dims_of(layer, g, input.height, input.width);
        MmaPlan plan = plan_of(d, current_device().multiprocessors, fit_);
        // The splits' partial sums past 2^31: fewer splits, then none.
        while (plan.splits > 1 && sums * plan.splits > kMaxElements) {
            plan = split_k(d, plan, plan.splits / 2);
        }
        const std::int64_t conv = sums * plan.splits;
        ensure(d_input_, input_size_, input.data.size());
        ensure(d_padded_, padded_size_, static_cast<std::size_t>(padded));
        ensure(d_conv_, conv_size_, static_cast<std::size_t>(conv));
        ensure(d_output_, output_size_, output.data.size());
        const cudaStream_t s = stream_->get();
        LayerTimings timings = timed_layer_runs(s, *hold_, "mma", input, d_input_.get(), output,
                                                d_output_.get(), warmup, repeat, stop,
                                                [&] { launch(layer, d, plan, s); });
        timings.path = fmt::format("mma.{}.{}", layer.allow_tf32 ? "tf32" : "3xtf32",
                                   plan.pipelined
                                       ? fmt::format("pipelined{}x{}", plan.tile_n, plan.splits)
                                       : std::string("plain"));
        return timings;
    }

private:
    static void ensure(DeviceArray<float>& array, std::size_t& size, std::size_t wanted) {
        if (array && size >= wanted) return;
        array = DeviceArray<float>{nullptr};  // free first: the device may be nearly full
        array = device_array<float>(std::max<std::size_t>(wanted, 1));
        size = wanted;
    }

    void launch(const ConvLayer& layer, const MmaDims& d, const MmaPlan& plan, cudaStream_t s) {
        const std::int64_t padded = std::int64_t{d.padded_height} * d.padded_width * d.in_channels;
        const BorderedInput bordered{d_input_.get(),
                                     static_cast<unsigned int>(d.in_height),
                                     static_cast<unsigned int>(d.in_width),
                                     static_cast<unsigned int>(d.in_channels),
                                     static_cast<unsigned int>(d.padded_width),
                                     d.pad_top,
                                     d.pad_left,
                                     layer.border,
                                     layer.border_value};
        pad_kernel<<<blocks_for(padded, 256), 256, 0, s>>>(
            bordered, static_cast<unsigned int>(padded), d_padded_.get());
        CUDA_CHECK_LAUNCH();
        if (plan.pipelined) {
            launch_pipelined(layer.allow_tf32, d, plan, s);
        } else {
            launch_plain(layer.allow_tf32, d, s);
        }
        const std::int64_t out = std::int64_t{d.out_height} * d.out_width * d.out_channels;
        finish_kernel<<<blocks_for(out, 256), 256, 0, s>>>(
            d_conv_.get(), plan.splits, d_bias_.get(), d, layer.activation == Activation::relu,
            layer.pool, d_output_.get());
        CUDA_CHECK_LAUNCH();
    }

    void launch_pipelined(bool tf32_only, const MmaDims& d, const MmaPlan& plan, cudaStream_t s) {
        const dim3 grid(blocks_for(d.pixels(), pipelined::kTileM),
                        blocks_for(d.out_channels, plan.tile_n),
                        static_cast<unsigned int>(plan.splits));
        const auto go = [&](auto kernel, std::size_t shared) {
            kernel<<<grid, pipelined::kThreads, shared, s>>>(d_padded_.get(), d_weights_.get(), d,
                                                             plan.k_per_split, d_conv_.get());
        };
        if (plan.tile_n == 64) {
            constexpr std::size_t shared = pipelined::shared_bytes<64>();
            tf32_only ? go(conv_mma_pipelined_kernel<64, true>, shared)
                      : go(conv_mma_pipelined_kernel<64, false>, shared);
        } else {
            constexpr std::size_t shared = pipelined::shared_bytes<128>();
            tf32_only ? go(conv_mma_pipelined_kernel<128, true>, shared)
                      : go(conv_mma_pipelined_kernel<128, false>, shared);
        }
        CUDA_CHECK_LAUNCH();
    }

    void launch_plain(bool tf32_only, const MmaDims& d, cudaStream_t s) {
        const dim3 grid(blocks_for(d.pixels(), kTileM), blocks_for(d.out_channels, kTileN));
        if (tf32_only) {
            conv_mma_kernel<true>
                <<<grid, kThreads, 0, s>>>(d_padded_.get(), d_weights_.get(), d, d_conv_.get());
        } else {
            conv_mma_kernel<false>
                <<<grid, kThreads, 0, s>>>(d_padded_.get(), d_weights_.get(), d, d_conv_.get());
        }
        CUDA_CHECK_LAUNCH();
    }

    const ConvLayer* layer_ = nullptr;
    PipelinedFit fit_;  // of the device prepare() ran on
    std::unique_ptr<Stream> stream_;
    std::unique_ptr<StreamHold> hold_;
    DeviceArray<float> d_weights_{nullptr}, d_bias_{nullptr};
    DeviceArray<float> d_input_{nullptr}, d_padded_{nullptr}, d_conv_{nullptr}, d_output_{nullptr};
    std::size_t input_size_ = 0, padded_size_ = 0, conv_size_ = 0, output_size_ = 0;
};

}  // namespace

std::unique_ptr<LayerVariant> make_mma_layer() { return std::make_unique<MmaLayer>(); }

}  // namespace cudaconv
