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

    if (ry > 0) {
        bands.bands.push_back({0, 0, width, ry});
        bands.bands.push_back({0, height - ry, width, ry});
    }
    if (rx > 0) {
        bands.bands.push_back({0, ry, rx, height - 2 * ry});
        bands.bands.push_back({width - rx, ry, rx, height - 2 * ry});
    }
    return bands;
}

}  // namespace cudaconv
