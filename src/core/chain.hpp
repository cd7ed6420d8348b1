#pragma once
// A filter chain (`-f A -f B ...`, docs/SPEC.md "Chains"): the filters
// applied in order, each with the run's border. Between steps the image is
// float32 of every channel, never rounded; only the last step writes the
// output's depth, and --scale, --delta and --abs are the last step's, so a
// chain equals its steps run one after another in float32.
#include <string>
#include <vector>

#include "core/backend.hpp"
#include "core/job.hpp"

namespace cudaconv {

// The chain's label for logs and {filter}: the steps' labels joined by '+'.
std::string chain_label(const std::vector<ConvParams>& steps);

// The output size after every step (each `valid` step takes its filter's
// size off; other borders keep the size).
Size2D chain_output_size(std::int64_t width, std::int64_t height,
                         const std::vector<ConvParams>& steps);

// A float32 image of `channels` channels, packed rows, no pixels (data
// null): an image between a chain's steps, or a bank's response.
ImageView float32_view(std::int64_t width, std::int64_t height, int channels);

// The jobs of `steps` from `src` to `dst`: step i reads step i-1's output.
// The images between steps are float32, of src's channels, at the size the
// steps before leave; their views carry no pixels (data null, row_bytes
// packed): whoever runs the chain places them (run_chain, or a CUDA
// variant's device buffers). dst must be the size chain_output_size gives.
std::vector<Job> chain_jobs(const ConstImageView& src, const ImageView& dst,
                            const std::vector<ConvParams>& steps);

// Runs a chain, each step on its own variant. (Where the steps equal one
// rank-1 filter, the caller may run that filter in their place:
// core/chain_compose.hpp.) Where the first step's variant is a CUDA one,
// every step's must be, and the first runs them all in one run: the images
// between steps stay on the device (RunOptions::later_steps). Otherwise the
// steps run one after another here, into float32 images made for them. The
// timings' filter_ms are the whole chain's, and `path` names each step's
// variant or path, joined by '+'. A chain of one step is that variant's
// run. Throws std::invalid_argument for a chain that mixes CPU and CUDA
// variants.
RunTimings run_chain(const std::vector<ChainStep>& steps, const RunOptions& options);

// Adds one step's timings, run on `backend`, to those of the steps before
// it in `total` (empty for none): its transfers, each timed filter run's
// time (as many runs as the step that ran fewest, one Ctrl-C stopped), and
// its path, or its variant's name, after `separator`.
void add_step_timings(RunTimings& total, const RunTimings& step, const Backend& backend,
                      char separator);

}  // namespace cudaconv
