#pragma once
// A chain of rank-1 steps that equals one filter only away from the
// image's edges (`replicate` or `constant` borders, steps that are not
// symmetric under a mirroring border; core/chain_compose.hpp), run as a
// variant that runs composed chains runs it on the device: the one filter
// over the whole image, exact wherever no step reads past the image, and
// the steps themselves on the bands within their reach of an edge
// (core/chain_edges.hpp).
#include <cstdint>
#include <optional>
#include <vector>

#include "core/job.hpp"

namespace cudaconv {

struct Rect {
    std::int64_t x = 0, y = 0, width = 0, height = 0;
};

struct ChainBands {
    ConvParams inside;  // the one filter, with the steps' border
    // How far from an edge the steps read past the image: their filters'
    // half sides added up.
    std::int64_t reach_x = 0, reach_y = 0;
    // The output samples within reach of an edge, once each: the top and
    // bottom rows, then the left and right columns between them; none
    // where a reach is 0.
    std::vector<Rect> bands;
};

// How a chain of `steps` on a width x height input runs as the one filter
// and its bands; none where composed_chain already makes it one filter,
// where the steps do not equal one rank-1 filter inside, or where the
// image is smaller than four reaches a side (the bands would be most of it).
std::optional<ChainBands> chain_bands(const std::vector<ConvParams>& steps, std::int64_t width,
                                      std::int64_t height);

}  // namespace cudaconv
