#pragma once
// The mma variant of a convolution layer (core/conv_layer.hpp): cudaconv's
// own implicit matrix product on the tensor cores, float32 results from
// split TF32 products (TF32 alone with --allow-tf32). A build without the
// CUDA toolkit gets one that refuses (runtime/no_cuda.cpp).
#include <memory>

#include "core/layer_variant.hpp"

namespace cudaconv {

std::unique_ptr<LayerVariant> make_mma_layer();

}  // namespace cudaconv
