#pragma once
// A filtered image in device memory, as the device encoders take it
// (png_deflate.hpp, jpeg_encoder.hpp).
#include <cstddef>
#include <cstdint>

#include "core/types.hpp"

namespace cudaconv {

// In OpenCV's channel order (BGR, BGRA).
struct DeviceImageRows {
    const std::byte* data = nullptr;
    std::int64_t width = 0;
    std::int64_t height = 0;
    std::int64_t pitch = 0;  // bytes from one row to the next
    int channels = 0;
    Depth depth = Depth::u8;
};

}  // namespace cudaconv
