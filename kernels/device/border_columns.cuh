#pragma once
// Samples outside an interleaved row, through the border policy, in 32-bit
// arithmetic for the kernels whose lanes at the image's sides rebuild
// their vectors a sample at a time (fast's strip and register paths), and
// rows outside the image. Row samples must number under 2^30 (their take()
// functions check).
#include "kernels/device/device_common.cuh"

namespace cudaconv {

// Column x, outside the row, through the border policy: in 32-bit closed
// forms where x is within a row's width of it (`near`: the caller knows
// the row is wider than the furthest any of its lanes reaches past its
// ends), else through border_index, out of line. (core/border.hpp's
// border_index_near here, made a template for 32 bits, costs f32 5x5 and
// 7x7 3% on an H100.)
__device__ __forceinline__ int outside_column(BorderMode mode, int x, int width, bool near) {
    if (!near) return static_cast<int>(border_index_out_of_line(mode, x, width));
    const bool before = x < 0;
    switch (mode) {
        case BorderMode::reflect101: return before ? -x : 2 * width - 2 - x;
        case BorderMode::reflect: return before ? -x - 1 : 2 * width - 1 - x;
        case BorderMode::replicate: return before ? 0 : width - 1;
        case BorderMode::wrap: return before ? x + width : x - width;
        default: return static_cast<int>(kBorderConstant);  // constant (valid is refused)
    }
}

// Where sample kk (0-based in the row, possibly outside it) of a row comes
// from, through the border policy: its index in the row, or -1 for the
// constant border. `near`: the closed forms hold (see outside_column).
template <int C>
__device__ __forceinline__ int rebuilt_sample(const DeviceJob& job, int kk, bool near) {
    const int width = static_cast<int>(job.src_width);
    const int pixel = kk >= 0 ? kk / C : -((-kk + C - 1) / C);  // rounded down
    const int channel = kk - pixel * C;
    const int x = pixel >= 0 && pixel < width ? pixel
                                              : outside_column(job.border, pixel, width, near);
    return x < 0 ? -1 : x * C + channel;
}

// Row y through the border policy (kBorderConstant: the constant border),
// out of line for the rows above or below the image only.
__device__ __forceinline__ std::int64_t image_row(const DeviceJob& job, std::int64_t y) {
    const bool inside = static_cast<std::uint64_t>(y) < static_cast<std::uint64_t>(job.src_height);
    return inside ? y : border_index_out_of_line(job.border, y, job.src_height);
}

}  // namespace cudaconv
