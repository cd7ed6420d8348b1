#pragma once
// A convolution layer's input with its border, one element at a time: what
// the cudnn and mma variants' padding kernels write. The bordered tensor is
// (padded_height, padded_width, channels); element (y, x, c) of it is the
// input's (y - pad_top, x - pad_left, c) through the border (core/border.hpp).
#include <cstdint>

#include "core/border.hpp"

namespace cudaconv {

struct BorderedInput {
    const float* input = nullptr;  // (in_height, in_width, channels), channels last
    unsigned int in_height = 0, in_width = 0, channels = 0;
    unsigned int padded_width = 0;
    int pad_top = 0, pad_left = 0;
    BorderMode border = BorderMode::constant;
    float border_value = 0.0f;
};

// Element `i` of the bordered tensor in (H', W', C) order: its value, and
// its row, column and channel in y, x and c.
__device__ __forceinline__ float bordered_element(const BorderedInput& b, unsigned int i,
                                                  unsigned int& y, unsigned int& x,
                                                  unsigned int& c) {
    c = i % b.channels;
    const unsigned int p = i / b.channels;
    x = p % b.padded_width;
    y = p / b.padded_width;
    const std::int64_t sy =
        border_index(b.border, std::int64_t{y} - b.pad_top, static_cast<std::int64_t>(b.in_height));
    const std::int64_t sx =
        border_index(b.border, std::int64_t{x} - b.pad_left, static_cast<std::int64_t>(b.in_width));
    if (sy == kBorderConstant || sx == kBorderConstant) return b.border_value;
    return b.input[(static_cast<unsigned int>(sy) * b.in_width + static_cast<unsigned int>(sx)) *
                       b.channels +
                   c];
}

}  // namespace cudaconv
