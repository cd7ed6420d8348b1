#include "cpu/row_ring.hpp"

namespace cudaconv {

RowPlan make_row_plan(const Job& job) {
    const ConvParams& p = job.params;
    RowPlan plan;
    plan.out_width = job.dst.width;
    plan.out_height = job.dst.height;
    plan.channels = job.src.channels;
    plan.filtered = job.filtered_channels();
    plan.padded_width = plan.out_width + p.filter.width - 1;
    plan.origin_x = origin_x(p);
    // Rows are padded to whole chunks of lanes, which every vector width
    // divides, so the vector loops (cpu/simd_rows.hpp) need no scalar
    // tail; at most kRowChunk - 1 lanes a row are computed in vain.
    const std::int64_t out_lanes = plan.out_width * plan.filtered;
    plan.chunks = (out_lanes + kRowChunk - 1) / kRowChunk;
    // Tap i of the last chunk reads up to chunks*kRowChunk - 1 + i*filtered.
    plan.row_lanes = plan.chunks * kRowChunk + std::int64_t{p.filter.width - 1} * plan.filtered;
    plan.source_x.resize(static_cast<std::size_t>(plan.padded_width));
    for (std::int64_t px = 0; px < plan.padded_width; ++px) {
        plan.source_x[static_cast<std::size_t>(px)] =
            border_index(p.border, px + origin_x(p), job.src.width);
    }
    plan.inside_begin = std::clamp(-origin_x(p), std::int64_t{0}, plan.padded_width);
    plan.inside_end = std::clamp(job.src.width - origin_x(p), plan.inside_begin, plan.padded_width);
    plan.border_value = static_cast<float>(p.border_value);
    for (int j = 0; j < p.filter.height; ++j) {
        for (int i = 0; i < p.filter.width; ++i) {
            const double w = p.filter.at(i, j);
            if (w != 0.0) plan.taps.push_back({static_cast<float>(w), i, j});
        }
    }
    return plan;
}

}  // namespace cudaconv
