#pragma once
// The cudnn variant of a convolution layer (core/conv_layer.hpp); a build
// without the CUDA toolkit gets one that refuses (runtime/no_cuda.cpp).
#include <memory>

#include "core/layer_variant.hpp"

namespace cudaconv {

std::unique_ptr<LayerVariant> make_cudnn_layer();

}  // namespace cudaconv
