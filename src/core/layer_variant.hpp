#pragma once
// The variants that run a convolution layer (core/conv_layer.hpp): cpu-ref,
// cpu, cudnn and mma. Smaller than Backend (core/backend.hpp): a layer has no
// integer depths, alpha, chains or codecs. One object serves a whole run,
// so a GPU variant keeps its handle and the layer's weights on the device
// between images.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/conv_layer.hpp"

namespace cudaconv {

// What one image's layer run measured, in milliseconds.
struct LayerTimings {
    double upload_ms = 0.0;        // 0 on the CPU
    double download_ms = 0.0;      // 0 on the CPU
    std::vector<double> layer_ms;  // one entry a timed run: convolution, bias, activation, pool
    std::string path;              // what ran, where the variant chooses (cuDNN's algorithm)
};

class LayerVariant {
public:
    virtual ~LayerVariant() = default;
    virtual std::string_view name() const = 0;
    virtual std::string_view summary() const = 0;  // one line for `list kernels`
    virtual bool uses_cuda() const = 0;
    // "" when it can run `layer` here, else why not, in words for the user.
    // May probe the device and load libraries; cheap after the first call.
    virtual std::string refusal(const ConvLayer& layer) const = 0;
    // The layer every later run() applies: `layer` must outlive them. A
    // variant may pack or upload its weights here, once for a whole run.
    virtual void prepare(const ConvLayer& layer) = 0;
    // The prepared layer of `input` into `output` (sized by layer_geometry).
    // Runs it `warmup` times untimed and `repeat` times timed; `stop` (may
    // be empty), asked before each run after the first, ends them early.
    virtual LayerTimings run(const Tensor3& input, Tensor3& output, int warmup, int repeat,
                             const std::function<bool()>& stop) = 0;
};

}  // namespace cudaconv
