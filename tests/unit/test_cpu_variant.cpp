// The `cpu` variant (src/cpu/cpu_parallel.cpp) and each of its paths
// (cpu.direct, cpu.two-pass, cpu.fft) against the oracle cpu-ref, over the
// product of cases of docs/SPEC.md, "Tolerances": border x image size x
// filter size x channels, every depth pair in turn, random asymmetric filters
// (some with zero taps, which `cpu` skips), random anchors, scale/delta/abs,
// alpha kept or filtered, and source and destination as ROIs of larger
// images. Runs without a GPU: this is the variant such machines get.
#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <ostream>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <opencv2/core.hpp>

#include "core/auto_select.hpp"
#include "variants/registry.hpp"
#include "support/compare.hpp"
#include "support/opencv_reference.hpp"
#include "support/random_image.hpp"

namespace cudaconv::test {
namespace {

Backend& variant(std::string_view name) {
    Backend* backend = find_backend(name);
    REQUIRE(backend != nullptr);
    return *backend;
}

// Dense filters run tap by tap; rank-1 ones (outer products, from 16 taps)
// as two passes, and a symmetric factor's taps are folded in pairs.
enum class Shape { dense, rank1, symmetric_rank1 };

struct Case {
    int width = 1, height = 1;
    int filter_width = 1, filter_height = 1;
    int channels = 1;
    BorderMode border = BorderMode::reflect101;
    Depth in_depth = Depth::u8;
    Depth out_depth = Depth::u8;
    std::uint64_t seed = 0;
    Shape shape = Shape::dense;
};

std::ostream& operator<<(std::ostream& os, const Case& c) {
    return os << c.width << "x" << c.height << "x" << c.channels << " " << depth_name(c.in_depth)
              << "->" << depth_name(c.out_depth) << ", filter " << c.filter_width << "x"
              << c.filter_height
              << (c.shape == Shape::dense   ? ""
                  : c.shape == Shape::rank1 ? " rank 1"
                                            : " rank 1, symmetric")
              << ", border " << border_name(c.border) << ", seed " << c.seed;
}

std::string describe(const ConvParams& p, bool roi) {
    std::ostringstream os;
    os << "anchor (" << p.anchor_x << "," << p.anchor_y << "), border value " << p.border_value
       << ", scale " << p.scale << ", delta " << p.delta << ", abs " << p.take_abs << ", alpha "
       << (p.alpha == AlphaMode::keep ? "keep" : "filter") << ", roi " << roi;
    return os.str();
}

// A random outer product column x row; symmetric factors where asked
// (each reads the same backwards), with a zero tap in each when `zeros`.
Filter rank1_filter(int width, int height, bool symmetric, bool zeros, std::uint64_t seed) {
    std::mt19937_64 gen(seed);
    std::uniform_real_distribution<double> tap(-1.0, 1.0);
    const auto factor = [&](int n) {
        std::vector<double> f(static_cast<std::size_t>(n));
        for (double& t : f) t = tap(gen);
        if (symmetric) {
            for (int i = 0; i < n / 2; ++i) f[static_cast<std::size_t>(n - 1 - i)] = f[i];
        }
        if (zeros && n > 2) f[1] = f[static_cast<std::size_t>(symmetric ? n - 2 : 1)] = 0.0;
        return f;
    };
    const std::vector<double> row = factor(width), column = factor(height);
    Filter f;
    f.width = width;
    f.height = height;
    f.label = "random rank 1";
    for (int j = 0; j < height; ++j) {
        for (int i = 0; i < width; ++i) f.taps.push_back(column[j] * row[i]);
    }
    return f;
}

// Parameters drawn from the seed, as the CUDA variants' tests draw them.
ConvParams random_params(const Case& c, std::mt19937_64& gen) {
    ConvParams p;
    if (c.shape == Shape::dense) {
        p.filter = random_filter(c.filter_width, c.filter_height, c.seed);
        if (c.seed % 4 == 0) {  // some zero taps, which `cpu` leaves out
            for (std::size_t t = 0; t < p.filter.taps.size(); t += 3) p.filter.taps[t] = 0.0;
        }
    } else {
        p.filter = rank1_filter(c.filter_width, c.filter_height, c.shape == Shape::symmetric_rank1,
                                c.seed % 4 == 0, c.seed);
    }
    p.anchor_x = std::uniform_int_distribution<int>(0, c.filter_width - 1)(gen);
    p.anchor_y = std::uniform_int_distribution<int>(0, c.filter_height - 1)(gen);
    p.border = c.border;
    p.border_value = std::uniform_real_distribution<double>(0.0, 200.0)(gen);
    double abs_sum = 0.0;
    for (double t : p.filter.taps) abs_sum += std::abs(t);
    p.scale = (gen() % 3 == 0 || abs_sum == 0.0) ? 1.0 : 1.0 / abs_sum;
    if (c.in_depth == Depth::u16 && c.out_depth == Depth::u8) p.scale /= 256.0;
    if (gen() % 5 == 0) p.scale = -p.scale;
    p.delta = std::uniform_real_distribution<double>(-20.0, 40.0)(gen);
    p.take_abs = gen() % 2 == 0;
    p.alpha = gen() % 2 == 0 ? AlphaMode::keep : AlphaMode::filter;
    return p;
}

// A Mat alone, or a ROI of a larger one whose margins hold other samples.
cv::Mat make_input(const Case& c, bool roi) {
    const int type = cv_type(c.in_depth, c.channels);
    if (!roi) return random_image(c.width, c.height, type, c.seed);
    const cv::Mat parent = random_image(c.width + 5, c.height + 3, type, c.seed);
    return parent(cv::Rect(2, 1, c.width, c.height));
}

// Samples no correct output equals everywhere: NaN for float, random levels
// for integers.
void fill_garbage(cv::Mat& m, std::uint64_t seed) {
    if (m.depth() == CV_32F) {
        m.setTo(cv::Scalar::all(std::numeric_limits<double>::quiet_NaN()));
    } else {
        cv::RNG rng(seed);
        rng.fill(m, cv::RNG::UNIFORM, 0, m.depth() == CV_8U ? 256 : 65536);
    }
}

// Bytes of a Mat, to compare float images holding NaN.
cv::Mat bytes(const cv::Mat& m) {
    return cv::Mat(m.rows, m.cols * static_cast<int>(m.elemSize()), CV_8UC1, m.data, m.step[0]);
}

struct Tally {
    int passed = 0;
    int failed = 0;
    int empty = 0;  // `valid` with a filter larger than the image: nothing to compare
};

// Runs each named variant on the case (the reference computed once), each
// within its own tolerance; a variant that refuses the job is a failure.
void run_case(const Case& c, Tally& tally, const std::vector<std::string_view>& names = {"cpu"}) {
    std::mt19937_64 gen(c.seed);
    const bool roi = c.seed % 3 == 1;
    const cv::Mat src = make_input(c, roi);
    const ConvParams params = random_params(c, gen);
    const Size2D size = output_size(c.width, c.height, params);
    if (size.width <= 0 || size.height <= 0) {
        // Nothing to write, and nothing may be touched: a null view.
        for (const std::string_view name : names) {
            variant(name).run(
                Job{const_view(src),
                    ImageView{nullptr, size.width, size.height, c.channels, c.out_depth, 0},
                    params},
                {});
        }
        ++tally.empty;
        return;
    }
    const int out_w = static_cast<int>(size.width), out_h = static_cast<int>(size.height);
    const int out_type = cv_type(c.out_depth, c.channels);

    cv::Mat expected(out_h, out_w, out_type);
    variant("cpu-ref").run(Job{const_view(src), mutable_view(expected), params}, {});

    for (const std::string_view name : names) {
        // The destination: a ROI of a garbage-filled parent when `roi`, so
        // that a write outside the view, or an unwritten sample, shows.
        cv::Mat parent(out_h + (roi ? 2 : 0), out_w + (roi ? 3 : 0), out_type);
        fill_garbage(parent, c.seed + 1);
        const cv::Rect rect = roi ? cv::Rect(1, 1, out_w, out_h) : cv::Rect(0, 0, out_w, out_h);
        cv::Mat actual = parent(rect);
        const cv::Mat parent_before = parent.clone();
        const Job job{const_view(src), mutable_view(actual), params};
        const Support support = variant(name).can_run(job);
        if (!support.ok) {
            FAIL_CHECK(name << " refused " << c << ": " << support.reason);
            ++tally.failed;
            continue;
        }
        variant(name).run(job, {});

        const Comparison cmp = compare_images(expected, actual, variant(name).tolerance(job));
        bool ok = cmp.ok;
        if (!ok) {
            FAIL_CHECK(name << " on " << c << ", " << describe(params, roi) << ": "
                            << cmp.describe());
        }
        if (roi) {
            cv::Mat after = parent.clone(), before = parent_before.clone();
            after(rect).setTo(cv::Scalar::all(0));
            before(rect).setTo(cv::Scalar::all(0));
            cv::Mat differs;
            cv::compare(bytes(after), bytes(before), differs, cv::CMP_NE);
            if (cv::countNonZero(differs) != 0) {
                ok = false;
                FAIL_CHECK(name << " wrote outside the destination view on " << c);
            }
        }
        ++(ok ? tally.passed : tally.failed);
    }
}

void report(const char* what, const Tally& t) {
    std::cout << "cpu's paths vs cpu-ref, " << what << ": " << t.passed << " passed, " << t.failed
              << " failed, " << t.empty << " with no output (valid)\n";
}

// Sizes of docs/SPEC.md, "Tolerances": 1x1, 1xN, Nx1, primes, 255/256/257 (around
// the variant's 128-float chunks too), kept short in one direction where the
// other is long so cpu-ref stays quick; 67x61 spans several bands.
const std::vector<std::pair<int, int>> kImageSizes{{1, 1},   {1, 37},  {41, 1},  {13, 7}, {31, 17},
                                                   {255, 3}, {256, 5}, {257, 9}, {67, 61}};
// 1, 2, 3, 5, 8, 17, 31, non-square, and larger than most images above.
const std::vector<std::pair<int, int>> kFilterSizes{{1, 1},   {2, 2},   {3, 3}, {5, 5}, {8, 8},
                                                    {17, 17}, {31, 31}, {1, 5}, {7, 3}, {45, 2}};
const std::vector<Depth> kDepths{Depth::u8, Depth::u16, Depth::f32};

}  // namespace

// `cpu` picks a path per job; each path also runs every case by name
// (cpu.fft within its own bound, as the GPU fft variant).
TEST_CASE("cpu and its paths equal cpu-ref over sizes, filters, borders, channels, depths",
          "[cpu]") {
    Tally tally;
    std::uint64_t seed = 7000;
    int depth_pick = 0;
    for (BorderMode border : all_border_modes()) {
        for (const auto& [w, h] : kImageSizes) {
            for (const auto& [fw, fh] : kFilterSizes) {
                for (int channels : {1, 3, 4}) {
                    // Every input x output depth pair comes round in turn.
                    const Depth in = kDepths[depth_pick % 3];
                    const Depth out = kDepths[(depth_pick / 3) % 3];
                    ++depth_pick;
                    run_case({w, h, fw, fh, channels, border, in, out, ++seed}, tally,
                             {"cpu", "cpu.direct", "cpu.fft"});
                }
            }
        }
    }
    report("product", tally);
    CHECK(tally.failed == 0);
    CHECK(tally.passed > 3000);
}

// Rank-1 filters: the same product on `cpu` and on its two-pass path by
// name (a symmetric factor's taps folded in pairs on integer inputs).
TEST_CASE("cpu and cpu.two-pass equal cpu-ref with rank-1 filters", "[cpu]") {
    Tally tally;
    std::uint64_t seed = 51000;
    int depth_pick = 0;
    const std::vector<std::pair<int, int>> sizes{{3, 3},   {4, 4},   {5, 5}, {8, 8},
                                                 {17, 17}, {31, 31}, {3, 7}, {19, 2}};
    for (BorderMode border : all_border_modes()) {
        for (const auto& [w, h] : kImageSizes) {
            for (const auto& [fw, fh] : sizes) {
                for (Shape shape : {Shape::rank1, Shape::symmetric_rank1}) {
                    const int channels = std::array<int, 3>{1, 3, 4}[(depth_pick / 9) % 3];
                    const Depth in = kDepths[depth_pick % 3];
                    const Depth out = kDepths[(depth_pick / 3) % 3];
                    ++depth_pick;
                    Case c{w, h, fw, fh, channels, border, in, out, ++seed};
                    c.shape = shape;
                    run_case(c, tally, {"cpu", "cpu.two-pass"});
                }
            }
        }
    }
    report("rank 1", tally);
    CHECK(tally.failed == 0);
    CHECK(tally.passed > 1000);
}

TEST_CASE("cpu equals cpu-ref on larger images: many bands and chunks, every depth pair", "[cpu]") {
    Tally tally;
    std::uint64_t seed = 97000;
    for (Depth in : kDepths) {
        for (Depth out : kDepths) {
            for (const auto& [fw, fh] : std::vector<std::pair<int, int>>{{3, 3}, {6, 11}}) {
                run_case({211, 97, fw, fh, 3, BorderMode::reflect101, in, out, ++seed}, tally,
                         {"cpu", "cpu.direct", "cpu.fft"});
            }
        }
    }
    for (BorderMode border : all_border_modes()) {
        run_case({301, 113, 7, 5, 4, border, Depth::u8, Depth::u8, ++seed}, tally,
                 {"cpu", "cpu.direct", "cpu.fft"});
        // The FFT path's tiles several to a side (a 37x41 filter on 301x613
        // takes 256x256 tiles, 2 by 3: test_cpu_paths.cpp), each one's
        // edge against the next.
        run_case({301, 613, 37, 41, 3, border, Depth::u8, Depth::u8, ++seed}, tally,
                 {"cpu", "cpu.fft"});
        for (Shape shape : {Shape::rank1, Shape::symmetric_rank1}) {
            Case c{301, 113, 19, 19, 3, border, Depth::u8, Depth::f32, ++seed};
            c.shape = shape;
            run_case(c, tally, {"cpu", "cpu.two-pass", "cpu.fft"});
        }
    }
    report("larger images", tally);
    CHECK(tally.failed == 0);
}

TEST_CASE("cpu rounds halves to even exactly like cpu-ref", "[cpu]") {
    // Taps of 0.5 on integer inputs make every other sum an exact .5, which
    // float32 holds exactly: nothing short of equality passes.
    const Depth out_depth = GENERATE(Depth::u8, Depth::u16);
    const BorderMode border =
        GENERATE(BorderMode::reflect101, BorderMode::constant, BorderMode::valid);
    const std::uint64_t seed = 0xC9A10000 + static_cast<std::uint64_t>(border);
    CAPTURE(seed, depth_name(out_depth), border_name(border));
    const cv::Mat src = random_image(37, 11, CV_8UC1, seed);
    ConvParams p;
    p.filter.width = 2;
    p.filter.height = 1;
    p.filter.taps = {0.5, 0.5};
    p.anchor_x = 1;
    p.border = border;
    p.border_value = 3.0;
    p.delta = out_depth == Depth::u8 ? 0.0 : 65400.0;  // ties near the u16 top too
    const Size2D size = output_size(src.cols, src.rows, p);
    const int type = cv_type(out_depth, 1);
    cv::Mat expected(static_cast<int>(size.height), static_cast<int>(size.width), type);
    cv::Mat actual(expected.size(), type);
    variant("cpu-ref").run({const_view(src), mutable_view(expected), p}, {});
    variant("cpu").run({const_view(src), mutable_view(actual), p}, {});
    const Comparison result = compare_images(expected, actual, {0.0, 0.0});
    INFO(result.describe());
    CHECK(result.ok);
}

TEST_CASE("cpu's paths give the same bits whatever the number of threads", "[cpu]") {
    // Bands and tile groups depend on the thread count; no output may.
    const std::string_view name = GENERATE("cpu.direct", "cpu.fft");
    const std::uint64_t seed = 0xC9B20000;
    CAPTURE(seed, name);
    const cv::Mat src = random_image(157, 283, CV_32FC3, seed);
    ConvParams p;
    p.filter = random_filter(9, 4, seed);
    p.anchor_x = 2;
    p.anchor_y = 3;
    p.border = BorderMode::reflect;
    cv::Mat many(src.size(), src.type()), one(src.size(), src.type());
    variant(name).run({const_view(src), mutable_view(many), p}, {});
    const int threads = cv::getNumThreads();
    cv::setNumThreads(1);
    variant(name).run({const_view(src), mutable_view(one), p}, {});
    cv::setNumThreads(threads);
    CHECK(cv::norm(bytes(many), bytes(one), cv::NORM_INF) == 0.0);
}

TEST_CASE("cpu honours warmup and repeat", "[cpu]") {
    const cv::Mat src = random_image(9, 5, CV_32FC3, 0xC9C3);
    ConvParams p;
    p.filter = random_filter(3, 3, 0xC9C4);
    p.anchor_x = p.anchor_y = 1;
    cv::Mat dst(5, 9, CV_32FC3);
    const RunTimings t = variant("cpu").run({const_view(src), mutable_view(dst), p}, {2, 3});
    CHECK(t.filter_ms.size() == 3);
    for (double ms : t.filter_ms) CHECK(ms >= 0.0);
    CHECK(t.upload_ms == 0.0);
    CHECK(t.download_ms == 0.0);
}

TEST_CASE("auto picks cpu, not cpu-ref, without a CUDA device", "[cpu][auto]") {
    std::vector<Backend*> candidates;
    for (const auto& backend : all_backends()) candidates.push_back(backend.get());
    const AutoChoice choice = choose_variant(Job{}, candidates, {false, "no CUDA driver"});
    REQUIRE(choice.backend != nullptr);
    CHECK(choice.backend->name() == "cpu");
    CHECK_FALSE(choice.backend->uses_cuda());
}

}  // namespace cudaconv::test
