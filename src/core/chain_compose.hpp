#pragma once
// A filter chain that equals one filter (docs/SPEC.md "Chains"): the
// steps' taps convolved into one filter whose side is their sides added
// up, less one a step. A variant that runs a rank-1 filter in two passes
// (Backend::runs_composed_chains) runs that filter once in place of the
// steps: one pass over the image where the steps made one each, with
// float32 images written and read between them.
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
#include <optional>
#include <vector>

#include "core/backend.hpp"
#include "core/job.hpp"

namespace cudaconv {

// The one filter the chain's steps equal, with the last step's scale,
// delta and --abs, and the steps' border and alpha; none where they do not
// (the rules above), or for fewer than two steps. Every step must have odd
// sides and its centre as anchor. Taps are convolved in double.
std::optional<ConvParams> composed_chain(const std::vector<ConvParams>& steps);

// The chain as one step on its first step's variant: where that variant
// runs composed chains, the steps compose into one rank-1 filter, and the
// variant can run it from the first step's input into the last step's
// output. None otherwise (the steps run one after another).
std::optional<ChainStep> chain_as_one_step(const std::vector<ChainStep>& steps);

}  // namespace cudaconv
