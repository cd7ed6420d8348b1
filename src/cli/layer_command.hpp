#pragma once
// `cudaconv INPUT... --weights W.npy [--bias b.npy] [--activation relu]
// [--pool max2] -o OUT.npy`: a CNN's convolution layer (core/conv_layer.hpp)
// over each input, in place of -f's filter. Every check that the command
// line and the inputs' headers allow (the options, the weights and bias,
// each input's channels against C_in, an odd size under the pool, the
// outputs) runs before any input is read; then the inputs run one at a
// time, each using every core or the GPU, with the main job's progress,
// --timings and --json.
#include "cli/filter_options.hpp"

namespace cudaconv {

// Throws UsageError where a layer option (--bias, --activation, --pool,
// --allow-tf32) is given without --weights.
void check_layer_options_need_weights(const FilterOptions& options);

// Runs the layer; returns the exit code, as run_filter_command does.
int run_layer_command(const FilterOptions& options);

}  // namespace cudaconv
