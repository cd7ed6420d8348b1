#include "core/conv_layer.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace cudaconv {

std::optional<Activation> parse_activation(std::string_view name) {
    if (name == "none") return Activation::none;
    if (name == "relu") return Activation::relu;
    return std::nullopt;
}

std::string_view activation_name(Activation a) { return a == Activation::relu ? "relu" : "none"; }

LayerGeometry layer_geometry(const ConvLayer& layer, std::int64_t height, std::int64_t width,
                             std::int64_t channels) {
    if (channels != layer.in_channels) {
        throw std::invalid_argument(fmt::format("{} channel{} where the weights take C_in = {}",
                                                channels, channels == 1 ? "" : "s",
                                                layer.in_channels));
    }
    LayerGeometry g;
    if (layer.border == BorderMode::valid) {
        g.conv_height = height - layer.kernel_height + 1;
        g.conv_width = width - layer.kernel_width + 1;
        if (g.conv_height < 1 || g.conv_width < 1) {
            throw std::invalid_argument(fmt::format(
                "{}x{} is smaller than the {}x{} kernel, which --border valid needs inside it",
                width, height, layer.kernel_width, layer.kernel_height));
        }
    } else {
        g.conv_height = height;
        g.conv_width = width;
        g.pad_top = (layer.kernel_height - 1) / 2;
        g.pad_left = (layer.kernel_width - 1) / 2;
    }
    g.out_height = g.conv_height;
    g.out_width = g.conv_width;
    if (layer.pool) {
        if (g.conv_height % 2 != 0 || g.conv_width % 2 != 0) {
            throw std::invalid_argument(fmt::format(
                "--pool max2 on a {}x{} convolution output: an odd size would leave its last "
                "{} out of every 2x2 block (crop the input to even sizes first)",
                g.conv_width, g.conv_height,
                g.conv_height % 2 != 0 && g.conv_width % 2 != 0 ? "row and column"
                : g.conv_height % 2 != 0                        ? "row"
                                                                : "column"));
        }
        g.out_height /= 2;
        g.out_width /= 2;
    }
    return g;
}

void max_pool2(const Tensor3& conv, Tensor3& out) {
    const std::int64_t c = conv.channels;
    for (std::int64_t y = 0; y < out.height; ++y) {
        for (std::int64_t x = 0; x < out.width; ++x) {
            const float* a = conv.pixel(2 * y, 2 * x);
            const float* b = conv.pixel(2 * y, 2 * x + 1);
            const float* d = conv.pixel(2 * y + 1, 2 * x);
            const float* e = conv.pixel(2 * y + 1, 2 * x + 1);
            float* o = out.pixel(y, x);
            for (std::int64_t k = 0; k < c; ++k) {
                o[k] = std::max(std::max(a[k], b[k]), std::max(d[k], e[k]));
            }
        }
    }
}

std::string layer_label(const ConvLayer& layer) {
    std::string border = layer.border == BorderMode::constant && layer.border_value == 0.0f
                             ? "zero"
                             : std::string(border_name(layer.border));
    return fmt::format("{}x{}x{}->{}, {}{}, border {}", layer.kernel_height, layer.kernel_width,
                       layer.in_channels, layer.out_channels, activation_name(layer.activation),
                       layer.pool ? ", max2" : "", border);
}

double layer_multiply_adds(const ConvLayer& layer, const LayerGeometry& g) {
    return static_cast<double>(g.conv_height) * static_cast<double>(g.conv_width) *
           layer.kernel_height * layer.kernel_width * layer.in_channels * layer.out_channels;
}

}  // namespace cudaconv
