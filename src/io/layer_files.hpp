#pragma once
// The files of a convolution layer (core/conv_layer.hpp): its weights and
// bias as NumPy .npy arrays, its input as an image or an (H, W[, C]) array,
// its output as an (H, W, C_out) array.
#include <cstdint>
#include <string>
#include <vector>

#include "core/conv_layer.hpp"
#include "io/decode_limits.hpp"

namespace cudaconv {

// The weights (k_h, k_w, C_in, C_out) float32, Keras's HWIO, and the bias
// (C_out,) float32 (`bias_path` empty: zeros). Throws UsageError
// "PATH: problem" for a file that cannot be read, is not such an array, or
// holds a value that is not finite, and for a bias whose length is not
// C_out. The rest of the layer (activation, pool, border) is left as
// ConvLayer's defaults.
ConvLayer load_conv_layer(const std::string& weights_path, const std::string& bias_path);

// What an input's header says of its shape, before it is decoded: (H, W, C)
// with 0s where the header does not tell (stdin, an unreadable file).
struct TensorShape {
    std::int64_t height = 0, width = 0, channels = 0;
};
TensorShape probe_layer_input(const std::string& path);

// An input as float32 (H, W, C): a .npy array as stored, with any number
// of channels; an image decoded as read_image does (io/image_io.hpp), its
// samples as they are (0..255 for 8 bits) and its colours in RGB(A) order,
// as NumPy's image libraries and CNNs take them. Throws WorkError
// "PATH: problem".
Tensor3 read_layer_input(const std::string& path, const ReadOptions& options);

// The .npy file of `tensor`, (H, W, C) float32.
std::vector<std::uint8_t> encode_tensor(const Tensor3& tensor);

}  // namespace cudaconv
