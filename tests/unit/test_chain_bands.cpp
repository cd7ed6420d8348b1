// A chain run as one filter inside and its steps near the edges
// (core/chain_bands.hpp, core/chain_edges.hpp), checked with OpenCV alone
// (copyMakeBorder + filter2D in double): the bands, their tiles run here
// one after another as the device runs them one a block, equal the steps
// run over the whole image, and the one filter equals them everywhere
// else. The bands are as thin as they may be, so that one sample short
// would fail it.
#include <catch2/catch.hpp>

#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <limits>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/chain_bands.hpp"
#include "core/chain_edges.hpp"
#include "support/opencv_reference.hpp"
#include "support/random_image.hpp"

namespace cudaconv::test {
namespace {

// A rank-1 step of odd sides, its row and column symmetric where asked.
ConvParams rank1_step(int width, int height, bool symmetric, BorderMode border,
                      std::uint64_t seed) {
    Filter row = random_filter(width, 1, seed);
    Filter column = random_filter(1, height, seed + 1000);
    if (symmetric) {
        for (int k = 0; k < width / 2; ++k) row.taps[width - 1 - k] = row.taps[k];
        for (int k = 0; k < height / 2; ++k) column.taps[height - 1 - k] = column.taps[k];
    }
    Filter f = random_filter(width, height, seed);
    for (int y = 0; y < height; ++y) {
        for (int x = 0; x < width; ++x) {
            f.taps[static_cast<std::size_t>(y) * width + x] = column.taps[y] * row.taps[x];
        }
    }
    f.label = "s" + std::to_string(seed);
    ConvParams p = centred_params(std::move(f));
    p.border = border;
    p.border_value = 41.0;
    return p;
}

cv::Mat steps_exact(const cv::Mat& src, const std::vector<ConvParams>& steps) {
    cv::Mat in = src;
    for (const ConvParams& p : steps) in = reference_exact(in, p);
    return in;
}

// The chain's bands written over `out` by run_edge_tile, every tile in
// turn on this thread; each tile's work starts as NaN, so that a sample it
// reads before making it shows in the output.
template <typename In>
void run_edges(const cv::Mat& src, cv::Mat& out, const ConvParams& last, const ChainEdges& edges,
               int filtered_channels) {
    DeviceJob job;
    job.src = reinterpret_cast<const std::byte*>(src.data);
    job.dst = reinterpret_cast<std::byte*>(out.data);
    job.src_pitch = static_cast<std::int64_t>(src.step);
    job.dst_pitch = static_cast<std::int64_t>(out.step);
    job.src_width = job.dst_width = src.cols;
    job.src_height = job.dst_height = src.rows;
    job.channels = src.channels();
    job.filtered_channels = filtered_channels;
    job.in_depth = depth_of(src);
    job.out_depth = depth_of(out);
    job.border = last.border;
    job.border_value = static_cast<float>(last.border_value);
    job.scale = static_cast<float>(last.scale);
    job.delta = static_cast<float>(last.delta);
    job.take_abs = last.take_abs;
    std::vector<float> work(edges.work_bytes / sizeof(float));
    for (int t = 0; t < edges.tiles.count; ++t) {
        std::fill(work.begin(), work.end(), std::numeric_limits<float>::quiet_NaN());
        run_edge_tile<In>(job, edges.steps, edges.steps.taps, edge_tile_at(edges.tiles, t),
                          work.data(), 0, 1);
    }
}

// The chain as `bands` and `edges` say, in float: the one filter over the
// whole image, then the bands.
cv::Mat banded(const cv::Mat& src, const std::vector<ConvParams>& steps, const ChainBands& bands,
               const ChainEdges& edges) {
    cv::Mat out;
    reference_exact(src, bands.inside).convertTo(out, CV_32F);
    run_edges<float>(src, out, steps.back(), edges, src.channels());
    return out;
}

// Every way chain_edges tiles the bands: the largest tiles, then each
// smaller size a tighter work area leaves.
std::vector<ChainEdges> every_tiling(const std::vector<ConvParams>& steps, const ChainBands& bands,
                                     int filtered_channels) {
    std::vector<ChainEdges> tilings;
    std::size_t budget = std::numeric_limits<std::size_t>::max();
    while (std::optional<ChainEdges> edges = chain_edges(steps, bands, filtered_channels, budget)) {
        const std::size_t used = edges->work_bytes;
        tilings.push_back(std::move(*edges));
        if (used == 0) break;
        budget = used - 1;
    }
    return tilings;
}

}  // namespace

TEST_CASE("chain_bands: the one filter inside and the steps near the edges equal the steps") {
    int cases = 0;
    int differs = 0;
    std::uint64_t seed = 11;
    for (BorderMode border : {BorderMode::replicate, BorderMode::constant, BorderMode::reflect101,
                              BorderMode::reflect}) {
        // Under a mirroring border the steps compose where they are
        // symmetric: these are not.
        const bool symmetric = border == BorderMode::replicate;
        for (const auto& [width, height] : {std::pair{40, 36}, {24, 64}, {64, 24}, {30, 30}}) {
            for (int count : {2, 3}) {
                std::vector<ConvParams> steps;
                for (int i = 0; i < count; ++i, ++seed) {
                    const int w = 1 + static_cast<int>(seed % 3) * 2;
                    const int h = 1 + static_cast<int>((seed / 3) % 3) * 2;
                    steps.push_back(rank1_step(w, h, symmetric, border, seed));
                }
                steps.back().scale = 1.5;
                steps.back().delta = -3.0;
                steps.back().take_abs = true;
                const std::optional<ChainBands> bands = chain_bands(steps, width, height);
                INFO(border_name(border)
                     << " " << width << "x" << height << ", " << count << " steps, seed " << seed);
                REQUIRE(bands.has_value());
                std::int64_t reach_x = 0, reach_y = 0;
                for (const ConvParams& p : steps) {
                    reach_x += p.filter.width / 2;
                    reach_y += p.filter.height / 2;
                }
                CHECK(bands->reach_x == reach_x);
                CHECK(bands->reach_y == reach_y);
                CHECK(bands->bands.size() == (reach_x > 0 ? 2u : 0u) + (reach_y > 0 ? 2u : 0u));

                const cv::Mat src = random_image(width, height, CV_32FC3, seed);
                const cv::Mat by_steps = steps_exact(src, steps);
                double largest = 0.0;
                cv::minMaxLoc(cv::Mat(cv::abs(by_steps)).reshape(1), nullptr, &largest);
                // Float sums of a few dozen taps a step.
                const double bound = 1e-5 * (1.0 + largest);
                const std::vector<ChainEdges> tilings = every_tiling(steps, *bands, 3);
                REQUIRE(tilings.size() >= 3);  // tiles of 64 or 32, then 16 and 8
                for (const ChainEdges& edges : tilings) {
                    INFO("tiles of " << edges.tiles.bands[0].tile_width << "x"
                                     << edges.tiles.bands[0].tile_height);
                    cv::Mat by_bands;
                    banded(src, steps, *bands, edges).convertTo(by_bands, CV_64F);
                    REQUIRE(by_bands.size() == by_steps.size());
                    CHECK(cv::norm(by_bands, by_steps, cv::NORM_INF) <= bound);
                }
                // The one filter alone differs near the edges, but where
                // each step filters along one axis only (a row, then a
                // column, commute with the border's copies): the bands are
                // needed.
                const cv::Mat inside_alone = reference_exact(src, bands->inside);
                differs += cv::norm(inside_alone, by_steps, cv::NORM_INF) > 100 * bound;
                ++cases;
            }
        }
    }
    CHECK(cases == 32);
    CHECK(differs == 27);
}

TEST_CASE("chain_bands: the bands hold every output sample within reach of an edge, once") {
    const std::vector<ConvParams> steps{rank1_step(5, 3, true, BorderMode::replicate, 1),
                                        rank1_step(7, 5, true, BorderMode::replicate, 2)};
    for (const auto& [width, height] : {std::pair{24, 16}, {25, 17}, {100, 40}}) {
        const std::optional<ChainBands> bands = chain_bands(steps, width, height);
        REQUIRE(bands.has_value());
        CHECK(bands->reach_x == 5);
        CHECK(bands->reach_y == 3);
        cv::Mat in_bands(height, width, CV_32S, cv::Scalar(0));
        for (const Rect& r : bands->bands) {
            in_bands(cv::Rect(static_cast<int>(r.x), static_cast<int>(r.y),
                              static_cast<int>(r.width), static_cast<int>(r.height))) += 1;
        }
        // Every tiling of them.
        std::vector<cv::Mat> in_tiles;
        for (const ChainEdges& edges : every_tiling(steps, *bands, 3)) {
            cv::Mat tiled(height, width, CV_32S, cv::Scalar(0));
            for (int t = 0; t < edges.tiles.count; ++t) {
                const EdgeTile tile = edge_tile_at(edges.tiles, t);
                CHECK((tile.width > 0 && tile.width <= 64));
                CHECK((tile.height > 0 && tile.height <= 64));
                tiled(cv::Rect(static_cast<int>(tile.x), static_cast<int>(tile.y), tile.width,
                               tile.height)) += 1;
            }
            in_tiles.push_back(tiled);
        }
        CHECK(in_tiles.size() >= 3);
        // Once each within reach of an edge, never inside.
        for (int y = 0; y < height; ++y) {
            for (int x = 0; x < width; ++x) {
                const bool near = x < 5 || x >= width - 5 || y < 3 || y >= height - 3;
                INFO(width << "x" << height << " at " << x << "," << y);
                REQUIRE(in_bands.at<int>(y, x) == (near ? 1 : 0));
                for (const cv::Mat& tiled : in_tiles)
                    REQUIRE(tiled.at<int>(y, x) == (near ? 1 : 0));
            }
        }
    }
}

TEST_CASE("chain_edges: a block's threads share a tile's samples, each sample once") {
    // As the device runs it: every thread of a block, in turn here.
    for (const auto& [samples, rows] : {std::pair{1, 5}, {7, 3}, {246, 45}, {600, 2}, {99, 94}}) {
        for (int threads : {1, 7, 256, 512}) {
            std::vector<int> seen(static_cast<std::size_t>(samples * rows), 0);
            for (int thread = 0; thread < threads; ++thread) {
                for_each_row_sample(samples, 2, 2 + rows, thread, threads, [&](int s, int y) {
                    REQUIRE((s >= 0 && s < samples && y >= 2 && y < 2 + rows));
                    ++seen[static_cast<std::size_t>((y - 2) * samples + s)];
                });
            }
            INFO(samples << " samples, " << rows << " rows, " << threads << " threads");
            CHECK(std::count(seen.begin(), seen.end(), 1) == samples * rows);
        }
    }
}

TEST_CASE("chain_edges: u8 with an alpha kept, scaled, saturated, as the steps in double") {
    // Under `constant` the border's value enters every step again.
    std::vector<ConvParams> steps{rank1_step(5, 7, false, BorderMode::constant, 21),
                                  rank1_step(9, 3, false, BorderMode::constant, 22),
                                  rank1_step(3, 5, false, BorderMode::constant, 23)};
    steps.back().scale = 40.0;
    steps.back().delta = 100.0;
    const int width = 70;
    const int height = 50;
    const cv::Mat src = random_image(width, height, CV_8UC4, 5);
    const std::optional<ChainBands> bands = chain_bands(steps, width, height);
    REQUIRE(bands.has_value());
    const std::optional<ChainEdges> edges =
        chain_edges(steps, *bands, 3, std::numeric_limits<std::size_t>::max());
    REQUIRE(edges.has_value());
    cv::Mat out(height, width, CV_8UC4, cv::Scalar::all(7));  // 7: not written
    run_edges<std::uint8_t>(src, out, steps.back(), *edges, 3);

    cv::Mat colour;
    cv::cvtColor(src, colour, cv::COLOR_BGRA2BGR);
    cv::Mat by_steps;
    steps_exact(colour, steps).convertTo(by_steps, CV_8U);  // rounds and saturates
    int saturated = 0;
    for (int y = 0; y < height; ++y) {
        for (int x = 0; x < width; ++x) {
            const cv::Vec4b got = out.at<cv::Vec4b>(y, x);
            const bool near = x < 7 || x >= width - 7 || y < 6 || y >= height - 6;
            INFO("at " << x << "," << y);
            if (!near) {
                REQUIRE(got == cv::Vec4b(7, 7, 7, 7));
                continue;
            }
            const cv::Vec3b want = by_steps.at<cv::Vec3b>(y, x);
            for (int c = 0; c < 3; ++c) {
                // A float sum may round the other way at .5.
                REQUIRE(std::abs(int(got[c]) - int(want[c])) <= 1);
                saturated += want[c] == 0 || want[c] == 255;
            }
            REQUIRE(got[3] == src.at<cv::Vec4b>(y, x)[3]);
        }
    }
    // The scale drives some samples past either end.
    CHECK(saturated > 0);
}

TEST_CASE("chain_edges: chains it leaves to the steps") {
    const ConvParams step = rank1_step(5, 5, false, BorderMode::replicate, 31);
    const ChainBands bands = *chain_bands({step, step}, 64, 64);
    const std::size_t any = std::numeric_limits<std::size_t>::max();
    CHECK(chain_edges({step, step}, bands, 3, any));
    // More steps than kMaxEdgeSteps.
    CHECK(chain_edges(std::vector<ConvParams>(kMaxEdgeSteps, step), bands, 3, any));
    CHECK_FALSE(chain_edges(std::vector<ConvParams>(kMaxEdgeSteps + 1, step), bands, 3, any));
    // Rows and columns of more than kMaxEdgeTaps taps.
    const ConvParams wide = rank1_step(kMaxEdgeTaps - 1, 1, false, BorderMode::replicate, 32);
    CHECK_FALSE(chain_edges({wide, step}, bands, 3, any));
    // A border whose bands map far from the tile.
    ConvParams wrapped = step;
    wrapped.border = BorderMode::wrap;
    CHECK_FALSE(chain_edges({wrapped, wrapped}, bands, 3, any));
    // No tile's work fits: the top band's 8x4 tiles and the reach of 4
    // around them take 2 planes of (8 + 8) x (4 + 8) x 4 channels.
    const std::size_t smallest = 2 * sizeof(float) * 16 * 12 * 4;
    CHECK(chain_edges({step, step}, bands, 4, smallest));
    CHECK_FALSE(chain_edges({step, step}, bands, 4, smallest - 1));
}

TEST_CASE("chain_bands: asked for every image, it costs the steps' sides, not their areas") {
    // Two 541x541 steps: their taps convolved as images would take about
    // 10^11 multiplications; their rows and columns, under a million.
    const std::vector<ConvParams> steps{rank1_step(541, 541, true, BorderMode::replicate, 6),
                                        rank1_step(541, 541, true, BorderMode::replicate, 7)};
    const auto start = std::chrono::steady_clock::now();
    CHECK_FALSE(chain_bands(steps, 2000, 2000));  // under four reaches (2160)
    const std::optional<ChainBands> bands = chain_bands(steps, 4000, 3000);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    REQUIRE(bands.has_value());
    CHECK(bands->inside.filter.width == 1081);
    CHECK(bands->inside.filter.height == 1081);
    CHECK(seconds < 2.0);
}

TEST_CASE("chain_bands: chains it leaves to other ways") {
    const auto chain = [](BorderMode border, bool symmetric) {
        return std::vector<ConvParams>{rank1_step(5, 5, symmetric, border, 3),
                                       rank1_step(3, 3, symmetric, border, 4)};
    };
    // Already one filter (core/chain_compose.hpp).
    CHECK_FALSE(chain_bands(chain(BorderMode::reflect101, true), 64, 64));
    CHECK_FALSE(chain_bands(chain(BorderMode::wrap, false), 64, 64));
    CHECK_FALSE(chain_bands(chain(BorderMode::valid, false), 64, 64));
    // Taken, as large as four reaches a side (the reach is 3); not smaller.
    CHECK(chain_bands(chain(BorderMode::replicate, true), 12, 12));
    CHECK_FALSE(chain_bands(chain(BorderMode::replicate, true), 11, 64));
    CHECK_FALSE(chain_bands(chain(BorderMode::constant, false), 64, 11));
    // A step before the last scales: not one filter inside either.
    std::vector<ConvParams> scaled = chain(BorderMode::replicate, true);
    scaled.front().scale = 2.0;
    CHECK_FALSE(chain_bands(scaled, 64, 64));
    // Not rank 1.
    std::vector<ConvParams> dense = chain(BorderMode::replicate, true);
    dense.front().filter = random_filter(5, 5, 9);
    CHECK_FALSE(chain_bands(dense, 64, 64));
    // One step.
    CHECK_FALSE(chain_bands({rank1_step(5, 5, true, BorderMode::replicate, 5)}, 64, 64));
}

}  // namespace cudaconv::test
