#pragma once
// A job as CUDA kernels see it: device pointers and plain numbers, passed
// to every kernel by value. Built once per run by CudaBackend; plain data,
// so that code shared with the host (core/chain_edges.hpp) takes it too.
#include <cstddef>
#include <cstdint>

#include "core/convert.hpp"
#include "core/hd.hpp"
#include "core/job.hpp"
#include "core/types.hpp"

namespace cudaconv {

struct DeviceJob {
    const std::byte* src = nullptr;  // interleaved, in the input's depth
    std::byte* dst = nullptr;        // interleaved, in the output's depth
    const float* taps = nullptr;     // filter_height rows of filter_width, in global memory
    // Pitch in bytes, a multiple of 16; the bytes between a row's end and
    // its pitch are initialised (zero), so that a kernel may copy the
    // 16-byte vector that holds a row's last samples whole.
    std::int64_t src_width = 0, src_height = 0, src_pitch = 0;
    std::int64_t dst_width = 0, dst_height = 0, dst_pitch = 0;
    int channels = 1;
    int filtered_channels = 1;  // the rest (alpha) is copied
    Depth in_depth = Depth::u8;
    Depth out_depth = Depth::u8;
    int filter_width = 1, filter_height = 1;
    // Tap (i, j) of output (x, y) reads input (x + origin_x + i, y + origin_y + j).
    std::int64_t origin_x = 0, origin_y = 0;
    // Output (x, y) keeps the alpha of input (x + centre_x, y + centre_y).
    std::int64_t centre_x = 0, centre_y = 0;
    BorderMode border = BorderMode::reflect101;
    float border_value = 0.0f;
    float scale = 1.0f;
    float delta = 0.0f;
    bool take_abs = false;
};

// Output (x, y), channel c: `value` in the output's depth, rounded and
// saturated (core/convert.hpp).
CC_HD void store_output(const DeviceJob& job, std::int64_t x, std::int64_t y, int c, float value) {
    std::byte* row = job.dst + y * job.dst_pitch;
    const std::int64_t i = x * job.channels + c;
    switch (job.out_depth) {
        case Depth::u8:
            reinterpret_cast<std::uint8_t*>(row)[i] = saturate_to<std::uint8_t>(value);
            break;
        case Depth::u16:
            reinterpret_cast<std::uint16_t*>(row)[i] = saturate_to<std::uint16_t>(value);
            break;
        case Depth::f32: reinterpret_cast<float*>(row)[i] = value; break;
    }
}

}  // namespace cudaconv
