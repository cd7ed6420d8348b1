// A chain run as one filter inside and its steps near the edges
// (core/chain_bands.hpp), checked with OpenCV alone (copyMakeBorder +
// filter2D in double): the bands the strips give equal the steps run over
// the whole image, and the one filter equals them everywhere else. The
// strips are as thin as they may be, so that a seam reaching one sample
// further would fail it.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/chain_bands.hpp"
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

cv::Rect cv_rect(const Rect& r) {
    return {static_cast<int>(r.x), static_cast<int>(r.y), static_cast<int>(r.width),
            static_cast<int>(r.height)};
}

// The chain run as `bands` says: the one filter over the whole image, then
// each strip's steps, whose pieces are copied over it.
cv::Mat banded(const cv::Mat& src, const std::vector<ConvParams>& steps, const ChainBands& bands) {
    cv::Mat out = reference_exact(src, bands.inside);
    for (const ChainStrip& strip : bands.strips) {
        cv::Mat in(static_cast<int>(strip.height), static_cast<int>(strip.width), src.type(),
                   cv::Scalar::all(0));
        for (const RectCopy& piece : strip.from_input) {
            src(cv_rect(piece.from))
                .copyTo(in(cv::Rect(static_cast<int>(piece.to_x), static_cast<int>(piece.to_y),
                                    static_cast<int>(piece.from.width),
                                    static_cast<int>(piece.from.height))));
        }
        const cv::Mat strip_out = steps_exact(in, steps);
        for (const RectCopy& piece : strip.to_output) {
            strip_out(cv_rect(piece.from))
                .copyTo(out(cv::Rect(static_cast<int>(piece.to_x), static_cast<int>(piece.to_y),
                                     static_cast<int>(piece.from.width),
                                     static_cast<int>(piece.from.height))));
        }
    }
    return out;
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
                CHECK(bands->strips.size() == (reach_x > 0 ? 1u : 0u) + (reach_y > 0 ? 1u : 0u));

                const cv::Mat src = random_image(width, height, CV_32FC3, seed);
                const cv::Mat by_steps = steps_exact(src, steps);
                const cv::Mat by_bands = banded(src, steps, *bands);
                double largest = 0.0;
                cv::minMaxLoc(cv::Mat(cv::abs(by_steps)).reshape(1), nullptr, &largest);
                REQUIRE(by_bands.size() == by_steps.size());
                CHECK(cv::norm(by_bands, by_steps, cv::NORM_INF) <= 1e-12 * (1.0 + largest));
                // The one filter alone differs near the edges, but where
                // each step filters along one axis only (a row, then a
                // column, commute with the border's copies): the bands are
                // needed.
                const cv::Mat inside_alone = reference_exact(src, bands->inside);
                differs += cv::norm(inside_alone, by_steps, cv::NORM_INF) > 1e-6 * (1.0 + largest);
                ++cases;
            }
        }
    }
    CHECK(cases == 32);
    CHECK(differs == 27);
}

TEST_CASE("chain_bands: every output sample comes from the one filter or one strip") {
    const std::vector<ConvParams> steps{rank1_step(5, 3, true, BorderMode::replicate, 1),
                                        rank1_step(7, 5, true, BorderMode::replicate, 2)};
    for (const auto& [width, height] : {std::pair{24, 16}, {25, 17}, {100, 40}}) {
        const std::optional<ChainBands> bands = chain_bands(steps, width, height);
        REQUIRE(bands.has_value());
        CHECK(bands->reach_x == 5);
        CHECK(bands->reach_y == 3);
        cv::Mat from_strips(height, width, CV_32S, cv::Scalar(0));
        for (const ChainStrip& strip : bands->strips) {
            for (const RectCopy& piece : strip.to_output) {
                CHECK(piece.from.x + piece.from.width <= strip.width);
                CHECK(piece.from.y + piece.from.height <= strip.height);
                from_strips(cv::Rect(static_cast<int>(piece.to_x), static_cast<int>(piece.to_y),
                                     static_cast<int>(piece.from.width),
                                     static_cast<int>(piece.from.height))) += 1;
            }
        }
        // Once each within reach of an edge, never inside.
        for (int y = 0; y < height; ++y) {
            for (int x = 0; x < width; ++x) {
                const bool near = x < 5 || x >= width - 5 || y < 3 || y >= height - 3;
                INFO(width << "x" << height << " at " << x << "," << y);
                REQUIRE(from_strips.at<int>(y, x) == (near ? 1 : 0));
            }
        }
    }
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
