#include "core/chain_edges.hpp"

#include <algorithm>
#include <utility>

#include "filters/rank1.hpp"

namespace cudaconv {
namespace {

bool leaves_bands(BorderMode border) {
    switch (border) {
        case BorderMode::replicate:
        case BorderMode::constant:
        case BorderMode::reflect:
        case BorderMode::reflect101: return true;
        case BorderMode::wrap:
        case BorderMode::valid: return false;
    }
    return false;
}

std::optional<EdgeSteps> edge_steps(const std::vector<ConvParams>& steps) {
    if (steps.empty() || steps.size() > static_cast<std::size_t>(kMaxEdgeSteps)) {
        return std::nullopt;
    }
    EdgeSteps edge;
    int taps = 0;
    for (const ConvParams& p : steps) {
        const Filter& f = p.filter;
        if (!leaves_bands(p.border) || f.width % 2 == 0 || f.height % 2 == 0 ||
            p.anchor_x != f.width / 2 || p.anchor_y != f.height / 2 ||
            taps + f.width + f.height > kMaxEdgeTaps) {
            return std::nullopt;
        }
        const std::optional<Rank1Filter> factors = separate(f);
        if (!factors) return std::nullopt;
        const int s = edge.count++;
        edge.half_x[s] = f.width / 2;
        edge.half_y[s] = f.height / 2;
        edge.row_at[s] = taps;
        for (double v : factors->row) edge.taps[taps++] = static_cast<float>(v);
        edge.column_at[s] = taps;
        for (double v : factors->column) edge.taps[taps++] = static_cast<float>(v);
    }
    return edge;
}

// The bands cut into tiles of up to `along` samples along a band and
// `across` across it.
EdgeTiles edge_tiles(const ChainBands& bands, int along, int across) {
    EdgeTiles tiles;
    for (const Rect& r : bands.bands) {
        if (r.width <= 0 || r.height <= 0) continue;
        EdgeBand& band = tiles.bands[tiles.band_count++];
        band.x = r.x;
        band.y = r.y;
        band.width = r.width;
        band.height = r.height;
        const bool wide = r.width >= r.height;
        band.tile_width = static_cast<int>(std::min<std::int64_t>(wide ? along : across, r.width));
        band.tile_height =
            static_cast<int>(std::min<std::int64_t>(wide ? across : along, r.height));
        band.across = static_cast<int>((r.width + band.tile_width - 1) / band.tile_width);
        band.down = static_cast<int>((r.height + band.tile_height - 1) / band.tile_height);
        tiles.count += band.across * band.down;
    }
    return tiles;
}

}  // namespace

std::optional<ChainEdges> chain_edges(const std::vector<ConvParams>& steps, const ChainBands& bands,
                                      int filtered_channels, std::size_t max_work_bytes) {
    if (bands.bands.size() > 4) return std::nullopt;
    const std::optional<EdgeSteps> edge = edge_steps(steps);
    if (!edge) return std::nullopt;
    for (const auto& [along, across] : {std::pair{64, 32}, {32, 32}, {16, 16}, {8, 8}}) {
        ChainEdges plan;
        plan.steps = *edge;
        plan.tiles = edge_tiles(bands, along, across);
        for (int b = 0; b < plan.tiles.band_count; ++b) {
            const EdgeBand& band = plan.tiles.bands[b];
            plan.work_bytes = std::max(
                plan.work_bytes,
                2 * sizeof(float) *
                    edge_plane_floats(*edge, band.tile_width, band.tile_height, filtered_channels));
        }
        if (plan.work_bytes <= max_work_bytes) return plan;
    }
    return std::nullopt;
}

}  // namespace cudaconv
