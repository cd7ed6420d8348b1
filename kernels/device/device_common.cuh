#pragma once
// Device helpers every CUDA variant shares: reading a sample through the
// border policy, finishing an output (stored by core/device_job.hpp's
// store_output, a cheap switch on the output's depth), copying alpha, and
// the per-depth dispatch. Kernels template on the input sample type.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "core/border.hpp"
#include "core/convert.hpp"
#include "core/device_job.hpp"
#include "kernels/runtime/cuda_check.hpp"

namespace cudaconv {

// A shared-memory pointer as the 32-bit address that PTX's shared-space
// instructions (cp.async.bulk, mbarrier, ldmatrix) take.
__device__ __forceinline__ std::uint32_t shared_address(const void* p) {
    return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// border_index out of line, for the few coordinates that a kernel's closed
// forms (border_index_near, or its own) do not cover: inlined where every
// staged item or row might take it, its 64-bit modulo arithmetic made most
// of fast's strip loop and 8% of fast-separable's stall samples.
inline __device__ __noinline__ std::int64_t border_index_out_of_line(BorderMode mode,
                                                                     std::int64_t p,
                                                                     std::int64_t len) {
    return border_index(mode, p, len);
}

// Item i of a launch order over a grid of items across x down (bands,
// tiles), as (across, down): first the columns at the image's left and
// right sides, then the rest row by row. The side items cost more than the
// others (their outer samples go through the border policy), and begun
// first they are hidden behind the rest instead of finishing last (fast's
// strip path and fast-separable's tensor-core path).
__device__ __forceinline__ int2 sides_first_at(int i, int across, int down) {
    const int sides = across >= 2 ? 2 : 1;
    if (i < sides * down) return make_int2(i < down ? 0 : across - 1, i < down ? i : i - down);
    const int j = i - sides * down;
    const int inner = across - 2;  // > 0 here
    return make_int2(1 + j % inner, j / inner);
}

template <typename T>
__device__ __forceinline__ float load_raw(const DeviceJob& job, std::int64_t x, std::int64_t y,
                                          int c) {
    const T* row = reinterpret_cast<const T*>(job.src + y * job.src_pitch);
    return static_cast<float>(__ldg(row + x * job.channels + c));
}

// The input sample at (x, y), which may lie outside the image: the border
// policy says where it reads, or that it is the constant border value.
template <typename T>
__device__ __forceinline__ float load_bordered(const DeviceJob& job, std::int64_t x, std::int64_t y,
                                               int c) {
    const std::int64_t sx = border_index(job.border, x, job.src_width);
    const std::int64_t sy = border_index(job.border, y, job.src_height);
    if (sx == kBorderConstant || sy == kBorderConstant) return job.border_value;
    return load_raw<T>(job, sx, sy, c);
}

// The plain float sum of output (x, y), channel c: every tap times its
// input sample through the border policy, in the filter's row order.
template <typename T>
__device__ __forceinline__ float direct_sum(const DeviceJob& job, std::int64_t x, std::int64_t y,
                                            int c) {
    float sum = 0.0f;
    for (int j = 0; j < job.filter_height; ++j) {
        for (int i = 0; i < job.filter_width; ++i) {
            sum += job.taps[j * job.filter_width + i] *
                   load_bordered<T>(job, x + job.origin_x + i, y + job.origin_y + j, c);
        }
    }
    return sum;
}

// scale, delta, |.|, then the output depth.
__device__ __forceinline__ void store_result(const DeviceJob& job, std::int64_t x, std::int64_t y,
                                             int c, float sum) {
    store_output(job, x, y, c, finish_value(sum, job.scale, job.delta, job.take_abs));
}

// The channels past filtered_channels (a kept alpha) are copied unchanged.
template <typename T>
__device__ __forceinline__ void copy_unfiltered(const DeviceJob& job, std::int64_t x,
                                                std::int64_t y) {
    for (int c = job.filtered_channels; c < job.channels; ++c) {
        store_output(job, x, y, c, load_raw<T>(job, x + job.centre_x, y + job.centre_y, c));
    }
}

// Calls f.template operator()<T>() with T the input's sample type.
template <typename F>
void dispatch_input_depth(Depth depth, F&& f) {
    switch (depth) {
        case Depth::u8: f(std::uint8_t{}); break;
        case Depth::u16: f(std::uint16_t{}); break;
        case Depth::f32: f(float{}); break;
    }
}

// Copies the job's taps to a variant's __constant__ array. The base has
// uploaded them to global memory on this stream; copying from there keeps
// the order without another host copy.
template <typename Symbol>
void copy_taps_to_constant(const Symbol& symbol, const DeviceJob& job, cudaStream_t stream) {
    const std::size_t bytes = static_cast<std::size_t>(job.filter_width) *
                              static_cast<std::size_t>(job.filter_height) * sizeof(float);
    CUDA_CHECK(
        cudaMemcpyToSymbolAsync(symbol, job.taps, bytes, 0, cudaMemcpyDeviceToDevice, stream));
}

inline unsigned int blocks_for(std::int64_t n, int per_block) {
    return static_cast<unsigned int>((n + per_block - 1) / per_block);
}

}  // namespace cudaconv
