#pragma once
// The variants that run a convolution layer (`--weights`), in the order
// `list kernels` shows them: cpu-ref, cpu, cudnn.
#include <memory>
#include <vector>

#include "core/layer_variant.hpp"

namespace cudaconv {

// A fresh set for one run: a variant keeps state (a GPU's handle, weights
// on the device) between the images of a run.
std::vector<std::unique_ptr<LayerVariant>> make_layer_variants();

}  // namespace cudaconv
