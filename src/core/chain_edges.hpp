#pragma once
// A banded chain's steps near the image's edges (core/chain_bands.hpp),
// one tile of a band at a time in a work area of floats: one CUDA block a
// tile in shared memory (kernels/runtime/chain_edges.cu), or one host
// thread in the tests. Every step is rank 1 and centred.
//
// A tile's work starts as the input around it, as far as the steps reach
// together, through the border policy. Each step then makes its image
// between steps on the tile and what the later steps reach around it: a
// row pass into the second plane, a column pass back into the first, and
// the samples past the image's edge filled from those inside by the border
// policy, as the next step would read them. So each step sees its input
// through the border, as a chain run step by step does. The last step's
// column pass writes the output.
//
// A sample past the edge reads the border's value (constant) or maps back
// to one no further inside than it lies outside (replicate, reflect,
// reflect101; the image at least four reaches a side), and so to one the
// step made: the tile lies in the image, and the area around it reaches no
// further past the edge than inside.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/border.hpp"
#include "core/chain_bands.hpp"
#include "core/convert.hpp"
#include "core/device_job.hpp"
#include "core/hd.hpp"
#include "core/job.hpp"
#include "core/types.hpp"

namespace cudaconv {

constexpr int kMaxEdgeSteps = 8;
constexpr int kMaxEdgeTaps = 256;
// Input samples a thread loads before it stores the first.
constexpr int kEdgeLoads = 8;

// The steps' rows and columns, in one array of taps (a kernel argument,
// so a chain's whole description travels with its launch).
struct EdgeSteps {
    int count = 0;
    int half_x[kMaxEdgeSteps] = {};
    int half_y[kMaxEdgeSteps] = {};
    int row_at[kMaxEdgeSteps] = {};
    int column_at[kMaxEdgeSteps] = {};
    float taps[kMaxEdgeTaps] = {};
};

// A band cut into `across` x `down` tiles of at most tile_width x
// tile_height.
struct EdgeBand {
    std::int64_t x = 0, y = 0, width = 0, height = 0;
    int tile_width = 0, tile_height = 0;
    int across = 0, down = 0;
};

struct EdgeTile {
    std::int64_t x = 0, y = 0;
    int width = 0, height = 0;
};

// The bands' tiles, numbered band by band, row by row.
struct EdgeTiles {
    EdgeBand bands[4];
    int band_count = 0;
    int count = 0;
};

// What a device runs for a banded chain's edges.
struct ChainEdges {
    EdgeSteps steps;
    EdgeTiles tiles;
    std::size_t work_bytes = 0;  // a tile's work area, the largest
};

// The steps' factors and the bands' tiles, the largest whose work area
// fits in `max_work_bytes`: up to 64 samples along a band and 32 across
// it (the longer a tile, the fewer samples around it each step makes;
// docs/PERFORMANCE.md), else 32 and 32, 16 and 16 or 8 and 8. None where
// the border is not one of the four that leave bands, the steps are more
// than kMaxEdgeSteps or their rows and columns more than kMaxEdgeTaps
// taps, or no tile fits.
std::optional<ChainEdges> chain_edges(const std::vector<ConvParams>& steps, const ChainBands& bands,
                                      int filtered_channels, std::size_t max_work_bytes);

// Waits for the block's other threads; on the host one thread runs the
// whole tile and has no one to wait for.
CC_HD void edge_barrier() {
#if defined(__CUDA_ARCH__)
    __syncthreads();
#endif
}

CC_HD EdgeTile edge_tile_at(const EdgeTiles& tiles, int index) {
    for (int b = 0; b < tiles.band_count; ++b) {
        const EdgeBand& band = tiles.bands[b];
        const int count = band.across * band.down;
        if (index < count) {
            EdgeTile tile;
            tile.x = band.x + static_cast<std::int64_t>(index % band.across) * band.tile_width;
            tile.y = band.y + static_cast<std::int64_t>(index / band.across) * band.tile_height;
            const std::int64_t right = band.x + band.width - tile.x;
            const std::int64_t below = band.y + band.height - tile.y;
            tile.width = static_cast<int>(right < band.tile_width ? right : band.tile_width);
            tile.height = static_cast<int>(below < band.tile_height ? below : band.tile_height);
            return tile;
        }
        index -= count;
    }
    return {};
}

// Floats of a tile's two planes: the tile and the steps' whole reach
// around it, every filtered channel.
CC_HD std::size_t edge_plane_floats(const EdgeSteps& steps, int tile_width, int tile_height,
                                    int filtered_channels) {
    int rx = 0;
    int ry = 0;
    for (int s = 0; s < steps.count; ++s) {
        rx += steps.half_x[s];
        ry += steps.half_y[s];
    }
    return static_cast<std::size_t>(tile_width + 2 * rx) *
           static_cast<std::size_t>(tile_height + 2 * ry) *
           static_cast<std::size_t>(filtered_channels);
}

// A thread's share of the samples [0, samples) of rows [y_first, y_end),
// counted row by row, every `threads`-th from `thread`: f(s, y). It steps
// from one to the next with adds alone.
template <typename F>
CC_HD void for_each_row_sample(int samples, int y_first, int y_end, int thread, int threads,
                               F&& f) {
    if (samples <= 0 || y_end <= y_first) return;
    const int rows_step = threads / samples;
    const int samples_step = threads - rows_step * samples;
    int s = thread % samples;
    int y = y_first + thread / samples;
    while (y < y_end) {
        f(s, y);
        s += samples_step;
        y += rows_step;
        if (s >= samples) {
            s -= samples;
            ++y;
        }
    }
}

// s / channels for the channel counts a job has, as divisions by constants.
CC_HD int pixel_of_sample(int s, int channels) {
    switch (channels) {
        case 1: return s;
        case 2: return s / 2;
        case 3: return s / 3;
        case 4: return s / 4;
        default: return s / channels;
    }
}

// border_index for p less than len past the image, in closed form where
// it holds.
CC_HD std::int64_t edge_border_index(BorderMode mode, std::int64_t p, std::int64_t len) {
    const std::int64_t q = border_index_near(mode, p, len);
    return q == kBorderFar ? border_index(mode, p, len) : q;
}

template <typename In>
CC_HD float edge_input(const DeviceJob& job, std::int64_t x, std::int64_t y, int c) {
    const std::int64_t sx = edge_border_index(job.border, x, job.src_width);
    const std::int64_t sy = edge_border_index(job.border, y, job.src_height);
    if (sx == kBorderConstant || sy == kBorderConstant) return job.border_value;
    const In* row = reinterpret_cast<const In*>(job.src + sy * job.src_pitch);
    return static_cast<float>(row[sx * job.channels + c]);
}

// The sum of count taps times samples `stride` apart, as four sums that
// wait on no other: their loads are in flight together.
CC_HD float edge_dot(const float* taps, const float* in, int count, int stride) {
    float s0 = 0.0f;
    float s1 = 0.0f;
    float s2 = 0.0f;
    float s3 = 0.0f;
    int i = 0;
    for (; i + 4 <= count; i += 4) {
        s0 += taps[i] * in[i * stride];
        s1 += taps[i + 1] * in[(i + 1) * stride];
        s2 += taps[i + 2] * in[(i + 2) * stride];
        s3 += taps[i + 3] * in[(i + 3) * stride];
    }
    for (; i < count; ++i) s0 += taps[i] * in[i * stride];
    return (s0 + s1) + (s2 + s3);
}

// A local coordinate's span [first, end), clamped to [low, high).
struct EdgeSpan {
    int first, end;
};
CC_HD EdgeSpan clamped_span(int first, int end, std::int64_t low, std::int64_t high) {
    EdgeSpan span{first, end};
    if (span.first < low) span.first = static_cast<int>(low);
    if (span.end > high) span.end = static_cast<int>(high);
    return span;
}

// Thread `thread` of `threads`' share of the chain on `tile`, from
// job.src into job.dst: the input through job's border, the output
// finished with job's scale, delta and |.| (the last step's), and the
// channels past filtered_channels (an alpha) copied from the input at
// (x + centre_x, y + centre_y); job's filter and taps are not read.
// `work` holds 2 * edge_plane_floats floats, `taps` steps.taps (or a copy
// of them). Within the tile's work a sample's place is local: (0, 0) is
// the image's (tile.x - reach_x, tile.y - reach_y), and channel c of local
// (x, y) is at (y * width + x) * channels + c of a plane `width` wide.
template <typename In>
CC_HD void run_edge_tile(const DeviceJob& job, const EdgeSteps& steps, const float* taps,
                         const EdgeTile& tile, float* work, int thread, int threads) {
    int reach_x = 0;
    int reach_y = 0;
    for (int s = 0; s < steps.count; ++s) {
        reach_x += steps.half_x[s];
        reach_y += steps.half_y[s];
    }
    const int cf = job.filtered_channels;
    const int width = tile.width + 2 * reach_x;
    const int height = tile.height + 2 * reach_y;
    const int row_floats = width * cf;
    float* const a = work;
    float* const b = work + static_cast<std::size_t>(row_floats) * static_cast<std::size_t>(height);
    const std::int64_t x0 = tile.x - reach_x;  // the image's coordinates of local (0, 0)
    const std::int64_t y0 = tile.y - reach_y;
    // The image in local coordinates: its columns and rows within the
    // planes.
    const EdgeSpan image_x = clamped_span(0, width, -x0, job.src_width - x0);
    const EdgeSpan image_y = clamped_span(0, height, -y0, job.src_height - y0);

    // The input, kEdgeLoads samples a thread at a time, every load issued
    // before the first is stored.
    {
        const int rows_step = threads / row_floats;
        const int samples_step = threads - rows_step * row_floats;
        int s = thread % row_floats;
        int y = thread / row_floats;
        while (y < height) {
            float v[kEdgeLoads] = {};
            int at[kEdgeLoads];
            CC_UNROLL
            for (int u = 0; u < kEdgeLoads; ++u) {
                at[u] = -1;
                if (y < height) {
                    const int x = pixel_of_sample(s, cf);
                    at[u] = y * row_floats + s;
                    v[u] = edge_input<In>(job, x0 + x, y0 + y, s - x * cf);
                    s += samples_step;
                    y += rows_step;
                    if (s >= row_floats) {
                        s -= row_floats;
                        ++y;
                    }
                }
            }
            CC_UNROLL
            for (int u = 0; u < kEdgeLoads; ++u) {
                if (at[u] >= 0) a[at[u]] = v[u];
            }
        }
    }
    edge_barrier();

    int rx = reach_x;
    int ry = reach_y;
    for (int step = 0; step < steps.count; ++step) {
        const int hx = steps.half_x[step];
        const int hy = steps.half_y[step];
        const float* row = taps + steps.row_at[step];
        const float* column = taps + steps.column_at[step];
        // What the later steps read around the tile, of which this step
        // makes the samples inside the image.
        rx -= hx;
        ry -= hy;
        const EdgeSpan xs =
            clamped_span(reach_x - rx, reach_x + tile.width + rx, image_x.first, image_x.end);
        const EdgeSpan ys =
            clamped_span(reach_y - ry, reach_y + tile.height + ry, image_y.first, image_y.end);
        const int samples = (xs.end - xs.first) * cf;
        const int first = xs.first * cf;
        const bool last = step + 1 == steps.count;

        // Every row the column pass reads, past the edge too.
        for_each_row_sample(samples, ys.first - hy, ys.end + hy, thread, threads,
                            [&](int s, int y) {
                                const int at = y * row_floats + first + s;
                                b[at] = edge_dot(row, a + at - hx * cf, 2 * hx + 1, cf);
                            });
        edge_barrier();
        for_each_row_sample(samples, ys.first, ys.end, thread, threads, [&](int s, int y) {
            const int at = y * row_floats + first + s;
            const float sum = edge_dot(column, b + at - hy * row_floats, 2 * hy + 1, row_floats);
            if (last) {
                const int x = pixel_of_sample(s, cf);
                store_output(job, x0 + xs.first + x, y0 + y, s - x * cf,
                             finish_value(sum, job.scale, job.delta, job.take_abs));
            } else {
                a[at] = sum;
            }
        });
        edge_barrier();
        if (last) break;
        // Past the edge, as the next step reads this image there.
        const int x_first = reach_x - rx;
        for_each_row_sample(
            (tile.width + 2 * rx) * cf, reach_y - ry, reach_y + tile.height + ry, thread, threads,
            [&](int s, int y) {
                const int x = x_first + pixel_of_sample(s, cf);
                if (x >= image_x.first && x < image_x.end && y >= image_y.first &&
                    y < image_y.end) {
                    return;
                }
                const int c = s - (x - x_first) * cf;
                const std::int64_t sx = edge_border_index(job.border, x0 + x, job.src_width);
                const std::int64_t sy = edge_border_index(job.border, y0 + y, job.src_height);
                a[y * row_floats + x * cf + c] = sx == kBorderConstant || sy == kBorderConstant
                                                     ? job.border_value
                                                     : a[static_cast<int>(sy - y0) * row_floats +
                                                         static_cast<int>(sx - x0) * cf + c];
            });
        edge_barrier();
    }
    // A kept alpha, copied.
    for (int c = cf; c < job.channels; ++c) {
        for_each_row_sample(tile.width, 0, tile.height, thread, threads, [&](int x, int y) {
            const In* in =
                reinterpret_cast<const In*>(job.src + (tile.y + y + job.centre_y) * job.src_pitch);
            store_output(job, tile.x + x, tile.y + y, c,
                         static_cast<float>(in[(tile.x + x + job.centre_x) * job.channels + c]));
        });
    }
}

}  // namespace cudaconv
