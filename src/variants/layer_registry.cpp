#include "variants/layer_registry.hpp"

#include "cpu/conv_layer_cpu.hpp"
#include "kernels/cudnn/cudnn_layer.hpp"
#include "kernels/layer/layer_mma.hpp"

namespace cudaconv {

std::vector<std::unique_ptr<LayerVariant>> make_layer_variants() {
    std::vector<std::unique_ptr<LayerVariant>> variants;
    variants.push_back(make_cpu_ref_layer());
    variants.push_back(make_cpu_layer());
    variants.push_back(make_cudnn_layer());
    variants.push_back(make_mma_layer());
    return variants;
}

}  // namespace cudaconv
