// A chain as one filter (core/chain_compose.hpp): where the rules say the
// steps compose, the one filter's exact result equals the steps' exact
// results one after another, borders and filters larger than the image
// included, checked with OpenCV alone (copyMakeBorder + filter2D in
// double); where they do not, nothing is composed.
#include <catch2/catch.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/chain.hpp"
#include "core/chain_compose.hpp"
#include "variants/registry.hpp"
#include "support/opencv_reference.hpp"
#include "support/random_image.hpp"
#include "support/run_planned_chain.hpp"

namespace cudaconv::test {
namespace {

// A random filter of odd sides, symmetric left to right and top to bottom
// where `symmetric`.
Filter odd_filter(int width, int height, bool symmetric, std::uint64_t seed) {
    Filter f = random_filter(width, height, seed);
    if (symmetric) {
        for (int y = 0; y < height; ++y) {
            for (int x = 0; x < width; ++x) {
                const int mx = x < width / 2 ? x : width - 1 - x;
                const int my = y < height / 2 ? y : height - 1 - y;
                f.taps[static_cast<std::size_t>(y) * width + x] = f.at(mx, my);
            }
        }
    }
    f.label = "f" + std::to_string(seed);
    return f;
}

ConvParams step(Filter f, BorderMode border) {
    ConvParams p = centred_params(std::move(f));
    p.border = border;
    return p;
}

// The steps' exact results one after another, in double.
cv::Mat steps_exact(const cv::Mat& src, const std::vector<ConvParams>& steps) {
    cv::Mat in = src;
    for (const ConvParams& p : steps) in = reference_exact(in, p);
    return in;
}

}  // namespace

TEST_CASE("composed_chain: the one filter equals the steps, borders included") {
    int cases = 0;
    std::uint64_t seed = 1;
    for (BorderMode border :
         {BorderMode::reflect101, BorderMode::reflect, BorderMode::wrap, BorderMode::valid}) {
        const bool symmetric = border == BorderMode::reflect101 || border == BorderMode::reflect;
        // Images smaller than the filters' reach too: their borders reflect
        // or wrap more than once.
        for (const auto& [width, height] : {std::pair{23, 19}, {6, 5}, {1, 4}, {3, 1}}) {
            for (int count : {2, 3}) {
                std::vector<ConvParams> steps;
                for (int i = 0; i < count; ++i, ++seed) {
                    const int w = 1 + static_cast<int>(seed % 4) * 2;
                    const int h = 1 + static_cast<int>((seed / 4) % 4) * 2;
                    steps.push_back(step(odd_filter(w, h, symmetric, seed), border));
                }
                steps.back().scale = 1.5;
                steps.back().delta = -3.0;
                steps.back().take_abs = true;
                const std::optional<ConvParams> one = composed_chain(steps);
                REQUIRE(one.has_value());
                int reach_w = 1, reach_h = 1;
                for (const ConvParams& p : steps) {
                    reach_w += p.filter.width - 1;
                    reach_h += p.filter.height - 1;
                }
                CHECK(one->filter.width == reach_w);
                CHECK(one->filter.height == reach_h);
                CHECK(one->border == border);
                if (border == BorderMode::valid && (reach_w > width || reach_h > height)) continue;

                const cv::Mat src = random_image(width, height, CV_32FC3, seed);
                const cv::Mat by_steps = steps_exact(src, steps);
                const cv::Mat at_once = reference_exact(src, *one);
                double largest = 0.0;
                cv::minMaxLoc(cv::Mat(cv::abs(by_steps)).reshape(1), nullptr, &largest);
                INFO(border_name(border)
                     << " " << width << "x" << height << ", " << count << " steps, seed " << seed);
                REQUIRE(at_once.size() == by_steps.size());
                CHECK(cv::norm(at_once, by_steps, cv::NORM_INF) <= 1e-12 * (1.0 + largest));
                ++cases;
            }
        }
    }
    CHECK(cases == 26);
}

TEST_CASE("composed_chain: steps that do not equal one filter are left as steps") {
    const auto two = [](BorderMode border, bool symmetric) {
        return std::vector<ConvParams>{step(odd_filter(3, 5, symmetric, 1), border),
                                       step(odd_filter(5, 3, symmetric, 2), border)};
    };
    // Borders that copy an edge or add a value.
    CHECK_FALSE(composed_chain(two(BorderMode::replicate, true)));
    CHECK_FALSE(composed_chain(two(BorderMode::constant, true)));
    // Mirroring borders, a step that is not symmetric.
    CHECK_FALSE(composed_chain(two(BorderMode::reflect101, false)));
    CHECK_FALSE(composed_chain(two(BorderMode::reflect, false)));
    CHECK(composed_chain(two(BorderMode::reflect101, true)));
    CHECK(composed_chain(two(BorderMode::wrap, false)));
    // One step is no chain.
    CHECK_FALSE(composed_chain({step(odd_filter(3, 3, true, 1), BorderMode::wrap)}));
    // A step before the last that scales, adds or takes |.|.
    for (int what = 0; what < 3; ++what) {
        std::vector<ConvParams> steps = two(BorderMode::wrap, false);
        if (what == 0) steps.front().scale = 2.0;
        if (what == 1) steps.front().delta = 1.0;
        if (what == 2) steps.front().take_abs = true;
        CHECK_FALSE(composed_chain(steps));
    }
    // An anchor off the centre, an even side, steps of two borders.
    std::vector<ConvParams> steps = two(BorderMode::wrap, false);
    steps.front().anchor_x = 0;
    CHECK_FALSE(composed_chain(steps));
    steps = two(BorderMode::wrap, false);
    steps.back() = centred_params(random_filter(4, 3, 9));
    steps.back().border = BorderMode::wrap;
    CHECK_FALSE(composed_chain(steps));
    steps = two(BorderMode::wrap, false);
    steps.back().border = BorderMode::valid;
    CHECK_FALSE(composed_chain(steps));
}

TEST_CASE("a chain of rank-1 steps runs as one filter on cpu, never on cpu-ref") {
    // Two symmetric rank-1 steps under the default border, u8 in and out.
    const auto rank1 = [](int side, std::uint64_t seed) {
        Filter row = odd_filter(side, 1, true, seed);
        Filter f;
        f.width = f.height = side;
        for (int y = 0; y < side; ++y) {
            for (int x = 0; x < side; ++x) f.taps.push_back(row.at(y, 0) * row.at(x, 0) / 8.0);
        }
        f.label = "r" + std::to_string(seed);
        return step(std::move(f), BorderMode::reflect101);
    };
    const std::vector<ConvParams> chain{rank1(5, 1), rank1(7, 2)};
    const cv::Mat src = random_image(40, 30, CV_8UC3, 3);
    cv::Mat on_cpu(30, 40, CV_8UC3), on_ref(30, 40, CV_8UC3);
    const auto run = [&](const char* variant, cv::Mat& out) {
        std::vector<ChainStep> steps;
        for (const Job& job : chain_jobs(const_view(src), mutable_view(out), chain)) {
            steps.push_back({find_backend(variant), job});
        }
        return run_planned_chain(steps).timings.path;
    };
    const std::string cpu_path = run("cpu", on_cpu);
    const std::string ref_path = run("cpu-ref", on_ref);
    INFO(cpu_path << " / " << ref_path);
    CHECK(cpu_path.find("(2 steps as one 11x11)") != std::string::npos);
    CHECK(ref_path == "cpu-ref+cpu-ref");
    CHECK(cv::norm(on_cpu, on_ref, cv::NORM_INF) <= 1.0);
}

}  // namespace cudaconv::test
