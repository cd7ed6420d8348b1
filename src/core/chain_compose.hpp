#pragma once
// A filter chain that equals one filter (docs/SPEC.md "Chains"): the
// steps' taps convolved into one filter whose side is their sides added
// up, less one a step. A variant that runs that filter in two passes, by
// FFT or bound by memory (Backend::runs_composed_chains, asked of the one
// filter's job) runs it once in place of the steps: one pass over the
// image where the steps made one each, with float32 images written and
// read between them.
//
// The steps equal the one filter wherever every output sample is the same
// sum of the same input samples, borders included:
//   - `valid`: nothing is read outside the image;
//   - `wrap`: a step's output on the periodic extension of its input is
//     periodic, so the next step's border reads what the step computed;
//   - `reflect101` and `reflect` where every step's taps are symmetric left
//     to right and top to bottom: such a step's output on the mirrored
//     extension of its input is mirrored about the same points.
// Never under `replicate` or `constant` (an edge's copies or the border's
// value differ from what a step computed there), and never where a step
// before the last scales, adds or takes the absolute value.
#include <cstddef>
#include <optional>
#include <vector>

#include "core/backend.hpp"
#include "core/job.hpp"

namespace cudaconv {

// Whether the steps' border lets them equal one filter everywhere (the
// rules above), whatever their other settings: composed_chain's first test.
bool composes_at_borders(const std::vector<ConvParams>& steps);

// The one filter the steps equal wherever none of them reads past the
// image, whatever the border (core/chain_bands.hpp runs it there), where
// every step is rank 1: their rows convolved, and their columns, so it
// costs their sides squared, not their areas. None where composed_chain's
// other rules say no.
std::optional<ConvParams> composed_rank1_inside(const std::vector<ConvParams>& steps);

// The one filter the chain's steps equal, with the last step's scale,
// delta and --abs, and the steps' border and alpha; none where they do not
// (the rules above), or for fewer than two steps. Every step must have odd
// sides and its centre as anchor. Taps are convolved in double.
std::optional<ConvParams> composed_chain(const std::vector<ConvParams>& steps);

// composed_chain's filter where it is rank 1: what a variant that runs
// composed chains runs in the steps' place. A chain's caller works it out
// once (batch/filter_set.hpp does, for a run's every image).
std::optional<ConvParams> composed_rank1_chain(const std::vector<ConvParams>& steps);

// The one filter's job from the chain's input `src` into its output `dst`.
Job one_filter_job(const ConstImageView& src, const ImageView& dst, const ConvParams& one);

// Whether `variant` runs the chain as the one filter of `one` (a job of
// one_filter_job): it can run that job and runs composed chains of it.
// Where it does not, the chain's steps run one after another (run_chain).
bool runs_as_one_filter(const Backend& variant, const Job& one);

// A chain of `steps` (its jobs from its input to its output) all on
// `variant`, as -k plans it: the one filter `composed` (composed_rank1_chain
// of the steps' params) on that variant where it runs the chain so
// (runs_as_one_filter); none where the steps run one after another.
std::optional<ChainStep> one_filter_step(Backend& variant, const std::vector<Job>& steps,
                                         const std::optional<ConvParams>& composed);

// Runs `one`, a chain of `steps` steps as one filter, on its variant; the
// timings' path says so: "fast-separable.mma (2 steps as one 31x31)".
RunTimings run_as_one_filter(const ChainStep& one, std::size_t steps, const RunOptions& options);

}  // namespace cudaconv
