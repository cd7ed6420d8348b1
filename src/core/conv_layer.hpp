#pragma once
// A CNN's convolution layer (`--weights`): an H x W x C_in float32 input
// convolved with C_out filters of k_h x k_w x C_in, a bias added to each
// output channel, an activation, and optionally a 2x2 max pool, as each of
// VGG16's layers does. Cross-correlation (no flip), stride 1, groups 1.
//
// Geometry follows Keras and PyTorch's padding='same': a k-tap side is
// padded by (k - 1) / 2 before and k / 2 after, so an even kernel's extra
// row and column go at the bottom and right. The padding reads zeros by
// default, or any border of core/border.hpp; `valid` pads nothing and the
// output shrinks by k - 1. The pool takes the maximum of each 2x2 block,
// stride 2, and is refused on an odd size, where it would have to drop the
// last row or column.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/types.hpp"

namespace cudaconv {

enum class Activation : std::uint8_t { none, relu };

std::optional<Activation> parse_activation(std::string_view name);
std::string_view activation_name(Activation a);

// An H x W x C float32 array in C order (channels fastest): a layer's input
// or output, as NumPy's (H, W, C).
struct Tensor3 {
    std::int64_t height = 0, width = 0, channels = 0;
    std::vector<float> data;

    Tensor3() = default;
    Tensor3(std::int64_t h, std::int64_t w, std::int64_t c)
        : height(h), width(w), channels(c), data(static_cast<std::size_t>(h * w * c)) {}
    float* pixel(std::int64_t y, std::int64_t x) {
        return data.data() + (y * width + x) * channels;
    }
    const float* pixel(std::int64_t y, std::int64_t x) const {
        return data.data() + (y * width + x) * channels;
    }
};

struct ConvLayer {
    int kernel_height = 1, kernel_width = 1;
    int in_channels = 1, out_channels = 1;
    // k_h x k_w x C_in x C_out in C order (Keras's HWIO): the tap (ky, kx)
    // of input channel ci for output channel co is at
    // ((ky * k_w + kx) * C_in + ci) * C_out + co.
    std::vector<float> weights;
    std::vector<float> bias;  // C_out values; zeros without --bias
    Activation activation = Activation::none;
    bool pool = false;  // --pool max2
    BorderMode border = BorderMode::constant;
    float border_value = 0.0f;  // --border constant's value; 0 is 'same' padding
    // Tensor cores may round the inputs to TF32 (10-bit mantissa): only with
    // --allow-tf32. Without it every variant multiplies in float32 or wider.
    bool allow_tf32 = false;

    const float* tap(int ky, int kx, int ci) const {
        return weights.data() +
               ((static_cast<std::size_t>(ky) * kernel_width + kx) * in_channels + ci) *
                   out_channels;
    }
};

// Where a layer's output comes from, for an input of height x width.
struct LayerGeometry {
    std::int64_t conv_height = 0, conv_width = 0;  // before the pool
    std::int64_t out_height = 0, out_width = 0;    // after it
    int pad_top = 0, pad_left = 0;                 // rows, columns read before the input's first
};

// Throws std::invalid_argument, in words for the user, for an input the
// layer cannot take: channels other than C_in, smaller than the kernel
// under `valid`, an odd size under the pool.
LayerGeometry layer_geometry(const ConvLayer& layer, std::int64_t height, std::int64_t width,
                             std::int64_t channels);

// bias, then the activation: what every variant does to a sum.
inline float finish_layer_sum(double sum, float bias, Activation activation) {
    const float v = static_cast<float>(sum + static_cast<double>(bias));
    return activation == Activation::relu && v < 0.0f ? 0.0f : v;  // NaN stays NaN
}

// The 2x2 max pool of `conv` (even sizes) into `out`.
void max_pool2(const Tensor3& conv, Tensor3& out);

// A one-line description: "3x3x64->128, relu, max2, border zero".
std::string layer_label(const ConvLayer& layer);

// Multiply-adds one input of height x width costs.
double layer_multiply_adds(const ConvLayer& layer, const LayerGeometry& g);

}  // namespace cudaconv
