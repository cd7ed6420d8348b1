#pragma once
// The device side of a GPU layer variant's run(), shared by cudnn and mma:
// upload the input, run the layer warmup + repeat times, download the
// output, and time each part with events on the variant's stream.
#include <cuda_runtime.h>

#include <functional>
#include <string_view>

#include "core/layer_variant.hpp"
#include "core/conv_layer.hpp"
#include "kernels/runtime/stream_hold.hpp"

namespace cudaconv {

// `launch` queues one whole run of the layer on `stream`, reading
// `d_input` and leaving `output.data.size()` floats at `d_output`. Each run
// after the first is the device's time alone: queued whole behind `hold`
// (kernels/runtime/stream_hold.hpp), so that no kernel waits for the host
// to launch it. `stop` (may be empty) is asked before each run after the
// first. The caller names the path that ran.
LayerTimings timed_layer_runs(cudaStream_t stream, StreamHold& hold, std::string_view variant,
                              const Tensor3& input, float* d_input, Tensor3& output,
                              const float* d_output, int warmup, int repeat,
                              const std::function<bool()>& stop,
                              const std::function<void()>& launch);

}  // namespace cudaconv
