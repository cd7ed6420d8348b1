#include "core/chain_bands.hpp"

#include "core/chain_compose.hpp"

namespace cudaconv {

std::optional<ChainBands> chain_bands(const std::vector<ConvParams>& steps, std::int64_t width,
                                      std::int64_t height) {
    // The cheap tests first: this is asked for every image.
    if (steps.size() < 2 || composes_at_borders(steps)) return std::nullopt;
    std::int64_t rx = 0;
    std::int64_t ry = 0;
    for (const ConvParams& p : steps) {
        rx += p.filter.width / 2;
        ry += p.filter.height / 2;
    }
    if (width < 4 * rx || height < 4 * ry) return std::nullopt;
    std::optional<ConvParams> inside = composed_rank1_inside(steps);
    if (!inside) return std::nullopt;
    ChainBands bands;
    bands.inside = std::move(*inside);
    bands.reach_x = rx;
    bands.reach_y = ry;

    // The top 2 reaches of rows over the bottom 2: rows [0, ry) and the
    // last ry of the output come from the strip's first and last ry.
    if (ry > 0) {
        ChainStrip s;
        s.width = width;
        s.height = 4 * ry;
        s.from_input = {RectCopy{{0, 0, width, 2 * ry}, 0, 0},
                        RectCopy{{0, height - 2 * ry, width, 2 * ry}, 0, 2 * ry}};
        s.to_output = {RectCopy{{0, 0, width, ry}, 0, 0},
                       RectCopy{{0, 3 * ry, width, ry}, 0, height - ry}};
        bands.strips.push_back(s);
    }
    // The left 2 reaches of columns beside the right 2, all rows: the
    // columns' rows that the first strip does not give.
    if (rx > 0 && height > 2 * ry) {
        ChainStrip s;
        s.width = 4 * rx;
        s.height = height;
        s.from_input = {RectCopy{{0, 0, 2 * rx, height}, 0, 0},
                        RectCopy{{width - 2 * rx, 0, 2 * rx, height}, 2 * rx, 0}};
        s.to_output = {RectCopy{{0, ry, rx, height - 2 * ry}, 0, ry},
                       RectCopy{{3 * rx, ry, rx, height - 2 * ry}, width - rx, ry}};
        bands.strips.push_back(s);
    }
    return bands;
}

}  // namespace cudaconv
