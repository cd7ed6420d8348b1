// How fast fast's u8 walk (kernels/fast_registers_u8.cu) could move its
// bytes, apart from its sums: its memory pattern alone, on 4000x3000 RGB u8
// (36 MB in, 36 out), beside a plain 16-byte copy of the same bytes, timed
// as scripts/gpu/copy_reference.cu times (held_timing.hpp: each launch
// queued behind a held stream; sources rotated over more than 4 times the
// L2). Each "walk" here
// is the walk's grid (a warp a band 512 bytes wide and `band` rows down,
// 4 warps a CUDA block, blocks of 4 output rows with the next two blocks'
// rows in flight) with its sums replaced by an XOR of the block's rows, so
// that what differs between them is how the rows reach the lanes:
//   async:     every lane copies its 16-byte vector of a row into the ring
//              in shared memory (cp.async), lanes 0 and 31 the words either
//              side, as the walk does for its top and bottom bands;
//              "own rows only" copies just the band's rows, not the 2
//              around it (a copy's bytes);
//   bulk2d:    one lane asks the tensor memory accelerator for a box of 2
//              rows x 544 bytes (the ring row's layout) into the ring,
//              completing on an mbarrier;
//   registers: no ring; each lane loads its vector of all the band's rows
//              (bands of 8) into registers at once, then stores.
// Unused shared memory caps the blocks an SM (5: the walk's, whose 96
// registers allow no more). The async and bulk2d walks' outputs must match
// (checked). Built here, run on the GPU machine (docs/GPU-TESTING.md):
//   nvcc -O3 -std=c++17 -arch=sm_90 -I. scripts/gpu/walk_probe.cu kernels/stream_hold.cu -lcuda -o .carry/walk_probe
#include <cuda.h>
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "kernels/stream_hold.hpp"
#include "scripts/gpu/copy_vectors.cuh"
#include "scripts/gpu/held_timing.hpp"

namespace {

using cudaconv::check_cuda;
using cudaconv::copy_vectors;

constexpr int kWidth = 4000, kHeight = 3000, kChannels = 3;
constexpr int kRowBytes = kWidth * kChannels;  // 12000: a multiple of 16, the pitch
constexpr int kRows = 4;                       // output rows a block
constexpr int kWarps = 4;
constexpr int kRingRows = 16;
constexpr int kRingRowBytes = 544;  // the warp's 512 bytes and 16 each side
constexpr int kBoxRows = 2;
constexpr int kBoxBytes = kBoxRows * kRingRowBytes;  // 1088
constexpr int kBoxStride = 1152;                     // 128-byte aligned boxes
constexpr int kBoxes = kRingRows / kBoxRows;         // 8 a warp

__device__ __forceinline__ uint4 operator^(uint4 a, uint4 b) {
    return make_uint4(a.x ^ b.x, a.y ^ b.y, a.z ^ b.z, a.w ^ b.w);
}

// Output row y0 + o: rows o, o + 1, o + 2 of the block XORed, and the
// words either side of the lane's vector (its neighbours') mixed in, so that
// every byte the walk reads is used.
__device__ __forceinline__ void store_block(const uint4 (&v)[kRows + 2], const unsigned (&side)[kRows + 2],
                                            unsigned char* dst, int k, int y0) {
#pragma unroll
    for (int o = 0; o < kRows; ++o) {
        if (y0 + o >= kHeight) return;
        uint4 out = v[o] ^ v[o + 1] ^ v[o + 2];
        out.x ^= side[o + 1];
        *reinterpret_cast<uint4*>(dst + static_cast<std::size_t>(y0 + o) * kRowBytes + k) = out;
    }
}

__device__ __forceinline__ int clamp_row(int y) { return y < 0 ? -y : y >= kHeight ? 2 * kHeight - 2 - y : y; }

// A warp's band: its column (512 bytes), first output row, and blocks of
// kRows rows (0 past the last band); bands numbered row by row of bands.
struct Band {
    int x, y0, steps;
};
__device__ __forceinline__ Band band_of(int band, int band_rows) {
    const int across = (kRowBytes + 511) / 512, down = (kHeight + band_rows - 1) / band_rows;
    if (band >= across * down) return {0, 0, 0};
    const int y0 = band / across * band_rows;
    return {band % across, y0, (min(band_rows, kHeight - y0) + kRows - 1) / kRows};
}

// The walk as its top and bottom bands copy: cp.async a lane, a commit
// group a block.
// Without Halo, only the band's own rows (and no words either side): the
// sums would be wrong, the bytes moved are a copy's.
template <bool Halo>
__global__ void __launch_bounds__(32 * kWarps, 5)
    walk_async(const unsigned char* __restrict__ src, unsigned char* __restrict__ dst, int band_rows) {
    __shared__ alignas(16) unsigned char ring[kWarps][kRingRows][kRingRowBytes];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const Band at = band_of(blockIdx.x * kWarps + warp, band_rows);
    if (at.steps == 0) return;
    const int x = at.x, k = x * 512 + lane * 16, y0 = at.y0, steps = at.steps;
    auto issue_row = [&](int r) {
        unsigned char* slot = ring[warp][r % kRingRows];
        const int y = Halo ? clamp_row(y0 - 1 + r) : min(y0 + r, kHeight - 1);
        const unsigned char* from = src + static_cast<std::size_t>(y) * kRowBytes + k;
        if (k < kRowBytes) __pipeline_memcpy_async(slot + 16 + 16 * lane, from, 16);
        if (Halo && lane == 0 && k >= 4) __pipeline_memcpy_async(slot + 12, from - 4, 4);
        if (Halo && lane == 31 && k + 16 < kRowBytes) __pipeline_memcpy_async(slot + 528, from + 16, 4);
    };
    auto issue_block = [&](int s) {
        if (s == 0) {
#pragma unroll
            for (int r = 0; r < kRows + (Halo ? 2 : 0); ++r) issue_row(r);
        } else if (s < steps) {
#pragma unroll
            for (int i = 0; i < kRows; ++i) issue_row(s * kRows + (Halo ? 2 : 0) + i);
        }
        __pipeline_commit();
    };
    issue_block(0);
    issue_block(1);
    for (int s = 0; s < steps; ++s) {
        __pipeline_wait_prior(1);
        __syncwarp();
        uint4 v[kRows + 2];
        unsigned side[kRows + 2];
#pragma unroll
        for (int i = 0; i < kRows + 2; ++i) {
            const unsigned char* slot = ring[warp][(s * kRows + i) % kRingRows];
            v[i] = *reinterpret_cast<const uint4*>(slot + 16 + 16 * lane);
            const unsigned left = __shfl_up_sync(0xffffffffu, v[i].w, 1);
            side[i] = lane == 0 ? (k >= 4 ? *reinterpret_cast<const unsigned*>(slot + 12) : 0u) : left;
        }
        __syncwarp();
        issue_block(s + 2);
        if (k < kRowBytes) store_block(v, side, dst, k, y0 + s * kRows);
    }
}

// The walk's order with no ring: each lane loads its vector of all the
// band's rows (8, and the 2 around them with Halo) into registers at once,
// then stores its 8 output rows.
template <bool Halo>
__global__ void __launch_bounds__(32 * kWarps)
    walk_registers(const unsigned char* __restrict__ src, unsigned char* __restrict__ dst) {
    constexpr int kBand = 8, kIn = kBand + (Halo ? 2 : 0);
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int across = (kRowBytes + 511) / 512, down = kHeight / kBand;
    const int band = blockIdx.x * kWarps + warp;
    if (band >= across * down) return;
    const int k = band % across * 512 + lane * 16;
    const int y0 = band / across * kBand;
    if (k >= kRowBytes) return;
    uint4 v[kIn];
#pragma unroll
    for (int r = 0; r < kIn; ++r) {
        const int y = Halo ? clamp_row(y0 - 1 + r) : y0 + r;
        v[r] = *reinterpret_cast<const uint4*>(src + static_cast<std::size_t>(y) * kRowBytes + k);
    }
#pragma unroll
    for (int o = 0; o < kBand; ++o) {
        const uint4 out = Halo ? v[o] ^ v[o + 1] ^ v[o + 2] : v[o];
        *reinterpret_cast<uint4*>(dst + static_cast<std::size_t>(y0 + o) * kRowBytes + k) = out;
    }
}

__device__ __forceinline__ std::uint32_t smem(const void* p) {
    return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// The walk fed by the tensor memory accelerator: lane 0 asks for boxes of 2
// rows x 136 words, from 4 words before the warp's first byte, each
// completing on its own mbarrier. Rows outside the image come back as zeros
// (the walk would keep cp.async for its top and bottom bands).
__global__ void __launch_bounds__(32 * kWarps, 5)
    walk_bulk2d(const __grid_constant__ CUtensorMap map, unsigned char* __restrict__ dst, int band_rows) {
    __shared__ alignas(128) unsigned char ring[kWarps][kBoxes][kBoxStride];
    __shared__ alignas(8) std::uint64_t bars[kWarps][kBoxes];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const Band at = band_of(blockIdx.x * kWarps + warp, band_rows);
    if (at.steps == 0) return;
    const int x = at.x, k = x * 512 + lane * 16, y0 = at.y0, steps = at.steps;
    if (lane == 0) {
        for (int b = 0; b < kBoxes; ++b) {
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem(&bars[warp][b])) : "memory");
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncwarp();
    const int word_x = x * 128 - 4;
    auto issue_box = [&](int b) {  // ring rows 2b, 2b + 1: input rows y0 - 1 + 2b ...
        if (lane != 0) return;
        std::uint64_t* bar = &bars[warp][b % kBoxes];
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem(bar)), "r"(kBoxBytes)
                     : "memory");
        asm volatile(
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
                smem(ring[warp][b % kBoxes])),
            "l"(&map), "r"(word_x), "r"(y0 - 1 + 2 * b), "r"(smem(bar))
            : "memory");
    };
    auto wait_box = [&](int b) {
        const std::uint32_t parity = (b / kBoxes) & 1;
        asm volatile(
            "{\n .reg .pred done;\n WAIT_%=:\n"
            " mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
            " @!done bra WAIT_%=;\n}\n" ::"r"(smem(&bars[warp][b % kBoxes])),
            "r"(parity)
            : "memory");
    };
    // Block s reads boxes 2s, 2s + 1, 2s + 2; the first block brings all
    // three, each later one two new.
    issue_box(0), issue_box(1), issue_box(2);
    if (1 < steps) issue_box(3), issue_box(4);
    for (int s = 0; s < steps; ++s) {
        wait_box(2 * s), wait_box(2 * s + 1), wait_box(2 * s + 2);
        uint4 v[kRows + 2];
        unsigned side[kRows + 2];
#pragma unroll
        for (int i = 0; i < kRows + 2; ++i) {
            const int r = s * kRows + i;
            const unsigned char* row = ring[warp][(r / kBoxRows) % kBoxes] + (r % kBoxRows) * kRingRowBytes;
            v[i] = *reinterpret_cast<const uint4*>(row + 16 + 16 * lane);
            const unsigned left = __shfl_up_sync(0xffffffffu, v[i].w, 1);
            side[i] = lane == 0 ? (k >= 4 ? *reinterpret_cast<const unsigned*>(row + 12) : 0u) : left;
        }
        __syncwarp();
        if (s + 2 < steps) issue_box(2 * s + 5), issue_box(2 * s + 6);
        if (k < kRowBytes) store_block(v, side, dst, k, y0 + s * kRows);
    }
}

CUtensorMap tensor_map_of(const void* image) {
    CUtensorMap map;
    const cuuint64_t dims[2] = {kRowBytes / 4, kHeight};
    const cuuint64_t strides[1] = {kRowBytes};
    const cuuint32_t box[2] = {kRingRowBytes / 4, kBoxRows};
    const cuuint32_t element_strides[2] = {1, 1};
    const CUresult status = cuTensorMapEncodeTiled(
        &map, CU_TENSOR_MAP_DATA_TYPE_UINT32, 2, const_cast<void*>(image), dims, strides, box,
        element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (status != CUDA_SUCCESS) {
        std::printf("cuTensorMapEncodeTiled failed: %d\n", static_cast<int>(status));
        std::exit(1);
    }
    return map;
}

}  // namespace

int main() {
    cudaDeviceProp device{};
    check_cuda(cudaGetDeviceProperties(&device, 0), "cudaGetDeviceProperties");
    cudaStream_t stream;
    check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    cudaconv::StreamHold hold;
    const std::size_t bytes = static_cast<std::size_t>(kRowBytes) * kHeight;
    const int buffers = static_cast<int>(4 * static_cast<std::size_t>(device.l2CacheSize) / bytes + 1);
    std::vector<unsigned char*> from(buffers), to(buffers);
    std::vector<CUtensorMap> maps(buffers);
    std::vector<unsigned char> noise(bytes);
    std::uint32_t seed = 12345;
    for (auto& b : noise) b = static_cast<unsigned char>((seed = seed * 1664525u + 1013904223u) >> 24);
    for (int b = 0; b < buffers; ++b) {
        check_cuda(cudaMalloc(&from[b], bytes), "cudaMalloc");
        check_cuda(cudaMalloc(&to[b], bytes), "cudaMalloc");
        check_cuda(cudaMemcpy(from[b], noise.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
        check_cuda(cudaMemset(to[b], 0, bytes), "cudaMemset");
        maps[b] = tensor_map_of(from[b]);
    }
    const int across = (kRowBytes + 511) / 512;
    auto walk_blocks = [&](int band) { return (across * ((kHeight + band - 1) / band) + kWarps - 1) / kWarps; };

    // The two walks must write the same bytes (inside bands: the async walk
    // reflects the rows outside the image, the bulk one reads zeros there).
    std::vector<unsigned char> a(bytes), b(bytes);
    walk_async<true><<<walk_blocks(8), 32 * kWarps, 0, stream>>>(from[0], to[0], 8);
    check_cuda(cudaMemcpyAsync(a.data(), to[0], bytes, cudaMemcpyDeviceToHost, stream), "copy back");
    check_cuda(cudaMemsetAsync(to[0], 0, bytes, stream), "cudaMemset");
    walk_bulk2d<<<walk_blocks(8), 32 * kWarps, 0, stream>>>(maps[0], to[0], 8);
    check_cuda(cudaMemcpyAsync(b.data(), to[0], bytes, cudaMemcpyDeviceToHost, stream), "copy back");
    check_cuda(cudaStreamSynchronize(stream), "walks");
    const std::size_t inner = static_cast<std::size_t>(kRowBytes) * (kHeight - 2);
    std::printf("walks agree on rows 1 .. %d: %s\n", kHeight - 2,
                std::memcmp(a.data() + kRowBytes, b.data() + kRowBytes, inner) == 0 ? "yes" : "NO");

    // Unused dynamic shared memory that leaves room for `per_sm` blocks an
    // SM at most (the real walk fits 5, capped by its 96 registers).
    auto pad_for = [&](const void* kernel, int per_sm) -> std::size_t {
        cudaFuncAttributes attributes{};
        check_cuda(cudaFuncGetAttributes(&attributes, kernel), "cudaFuncGetAttributes");
        const std::size_t share = device.sharedMemPerMultiprocessor / per_sm - 1024;
        const std::size_t pad = share > attributes.sharedSizeBytes ? share - attributes.sharedSizeBytes : 0;
        return std::min<std::size_t>(pad, 48 * 1024 - attributes.sharedSizeBytes);
    };
    auto report = [&](const char* name, cudaconv::HeldTimes r) {
        std::printf("%-28s %6.1f us (least %6.1f)  %5.0f GB/s\n", name, r.median_us, r.min_us,
                    2.0 * bytes / (r.median_us * 1e-6) * 1e-9);
    };
    for (int round = 0; round < 2; ++round) {
        report("16-byte copy", cudaconv::time_held(hold, stream, [&](int i) {
                   copy_vectors<<<device.multiProcessorCount * 16, 256, 0, stream>>>(
                       reinterpret_cast<const uint4*>(from[i]), reinterpret_cast<uint4*>(to[i]), bytes / 16);
               }, buffers));
        for (int per_sm : {5, 6}) {
            const std::size_t async_pad = pad_for(reinterpret_cast<const void*>(walk_async<true>), per_sm);
            const std::size_t bulk_pad = pad_for(reinterpret_cast<const void*>(walk_bulk2d), per_sm);
            for (int band : {8, 16, 32}) {
                char name[64];
                std::snprintf(name, sizeof name, "walk async, %d/SM, bands of %d", per_sm, band);
                report(name, cudaconv::time_held(hold, stream, [&](int i) {
                           walk_async<true><<<walk_blocks(band), 32 * kWarps, async_pad, stream>>>(from[i], to[i], band);
                       }, buffers));
                std::snprintf(name, sizeof name, "walk bulk2d, %d/SM, bands of %d", per_sm, band);
                report(name, cudaconv::time_held(hold, stream, [&](int i) {
                           walk_bulk2d<<<walk_blocks(band), 32 * kWarps, bulk_pad, stream>>>(maps[i], to[i], band);
                       }, buffers));
            }
        }
        // What the walk's pattern costs, part by part (bands of 8, 5
        // blocks an SM as the real walk): its own rows only, by cp.async;
        // straight into registers, without and with the rows around.
        const std::size_t own_pad = pad_for(reinterpret_cast<const void*>(walk_async<false>), 5);
        report("walk async, own rows only", cudaconv::time_held(hold, stream, [&](int i) {
                   walk_async<false><<<walk_blocks(8), 32 * kWarps, own_pad, stream>>>(from[i], to[i], 8);
               }, buffers));
        for (int per_sm : {5, 16}) {
            const std::size_t pad = pad_for(reinterpret_cast<const void*>(walk_registers<false>), per_sm);
            char name[64];
            std::snprintf(name, sizeof name, "walk order, registers, %d/SM", per_sm);
            report(name, cudaconv::time_held(hold, stream, [&](int i) {
                       walk_registers<false><<<walk_blocks(8), 32 * kWarps, pad, stream>>>(from[i], to[i]);
                   }, buffers));
            std::snprintf(name, sizeof name, "  the same, rows around too");
            report(name, cudaconv::time_held(hold, stream, [&](int i) {
                       walk_registers<true><<<walk_blocks(8), 32 * kWarps, pad, stream>>>(from[i], to[i]);
                   }, buffers));
        }
    }
    return 0;
}
