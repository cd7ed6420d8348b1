#pragma once
// The CPU variants of a convolution layer (core/conv_layer.hpp):
// `cpu-ref`, every sum in double in a fixed order (the oracle the other
// variants are held to), and `cpu`, float32 sums in Highway's vectors
// (cpu/simd_rows.hpp), six pixels by 2 vectors of output channels at once.
// Both split output rows across OpenCV's thread pool.
#include <memory>

#include "core/layer_variant.hpp"

namespace cudaconv {

std::unique_ptr<LayerVariant> make_cpu_ref_layer();
std::unique_ptr<LayerVariant> make_cpu_layer();

}  // namespace cudaconv
