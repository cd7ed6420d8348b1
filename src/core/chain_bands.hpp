#pragma once
// A chain of rank-1 steps that equals one filter only away from the
// image's edges (`replicate` or `constant` borders, steps that are not
// symmetric under a mirroring border; core/chain_compose.hpp), run as a
// variant that runs composed chains runs it on the device: the one filter
// over the whole image, exact wherever no step reads past the image, and
// the steps themselves on the bands within their reach of an edge.
//
// The bands come from two strips, each an image of two pieces of the input
// laid side by side: the top and bottom rows, or the left and right
// columns. Each piece keeps its own edge of the input; the seam between
// them is an edge the input does not have, and what it changes reaches no
// further than the steps' reach, short of the rows or columns the strip
// gives the output.
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/job.hpp"

namespace cudaconv {

struct Rect {
    std::int64_t x = 0, y = 0, width = 0, height = 0;
};

// A rectangle copied from one image to (to_x, to_y) of another.
struct RectCopy {
    Rect from;
    std::int64_t to_x = 0, to_y = 0;
};

// Two pieces of the chain's input into a strip image, the steps run on it,
// and two pieces of its output into the chain's output.
struct ChainStrip {
    std::int64_t width = 0, height = 0;
    std::array<RectCopy, 2> from_input;
    std::array<RectCopy, 2> to_output;
};

struct ChainBands {
    ConvParams inside;  // the one filter, with the steps' border
    // How far from an edge the steps read past the image: their filters'
    // half sides added up.
    std::int64_t reach_x = 0, reach_y = 0;
    std::vector<ChainStrip> strips;  // top and bottom, left and right; none where a reach is 0
};

// How a chain of `steps` on a width x height input runs as the one filter
// and its bands; none where composed_chain already makes it one filter,
// where the steps do not equal one rank-1 filter inside, or where the
// image is smaller than four reaches a side (the bands would be most of it).
std::optional<ChainBands> chain_bands(const std::vector<ConvParams>& steps, std::int64_t width,
                                      std::int64_t height);

}  // namespace cudaconv
