// Filter chains (core/chain.hpp): the jobs between steps, and every variant's
// chains against OpenCV run step by step in float32, an oracle that shares
// none of cudaconv's code: each step copyMakeBorder + filter2D in double,
// rounded to float32 as a chain's images between steps are.
#include <catch2/catch.hpp>

#include <cmath>
#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/chain.hpp"
#include "core/chain_bands.hpp"
#include "core/chain_compose.hpp"
#include "core/tolerance.hpp"
#include "variants/registry.hpp"
#include "support/compare.hpp"
#include "support/opencv_reference.hpp"
#include "support/random_image.hpp"
#include "support/run_planned_chain.hpp"
#include "support/skip_without_device.hpp"

namespace cudaconv::test {
namespace {

ConvParams step_of(Filter filter, BorderMode border) {
    ConvParams p = centred_params(std::move(filter));
    p.border = border;
    p.border_value = 37.5;
    return p;
}

// A chain's steps drawn from a seed: 2 or 3 filters of odd sides 1 to 7,
// all rank 1 (outer products, as fast-separable takes) for odd seeds, and
// of those, for seeds 1 mod 4, symmetric (then a reflecting border lets
// the steps compose into one filter, core/chain_compose.hpp); the run's
// border, and --scale, --delta and --abs on the last.
std::vector<ConvParams> random_chain(BorderMode border, AlphaMode alpha, Depth in, Depth out,
                                     std::uint64_t seed) {
    std::mt19937_64 gen(seed);
    const int steps = 2 + static_cast<int>(gen() % 2);
    const bool rank1 = seed % 2 == 1;
    std::vector<ConvParams> chain;
    for (int i = 0; i < steps; ++i) {
        const int w = 1 + static_cast<int>(gen() % 4) * 2;
        const int h = rank1 ? w : 1 + static_cast<int>(gen() % 4) * 2;
        const std::uint64_t taps_seed = seed * 7 + static_cast<std::uint64_t>(i);
        Filter f = random_filter(w, h, taps_seed);
        if (rank1) {
            Filter row = random_filter(w, 1, taps_seed + 1000);
            Filter column = random_filter(1, h, taps_seed + 2000);
            if (seed % 4 == 1) {
                for (int k = 0; k < w / 2; ++k) row.taps[w - 1 - k] = row.taps[k];
                for (int k = 0; k < h / 2; ++k) column.taps[h - 1 - k] = column.taps[k];
            }
            for (int y = 0; y < h; ++y) {
                for (int x = 0; x < w; ++x) {
                    f.taps[static_cast<std::size_t>(y) * w + x] = column.taps[y] * row.taps[x];
                }
            }
        }
        double abs_sum = 0.0;
        for (double t : f.taps) abs_sum += std::abs(t);
        for (double& t : f.taps) t /= abs_sum;  // keeps integer outputs off their ends
        f.label = "step" + std::to_string(i);
        ConvParams p = step_of(std::move(f), border);
        p.alpha = alpha;
        chain.push_back(std::move(p));
    }
    ConvParams& last = chain.back();
    if (in == Depth::u16 && out == Depth::u8) last.scale = 1.0 / 256.0;
    if (gen() % 2 == 0) last.scale *= 1.5;
    last.delta = std::uniform_real_distribution<double>(-10.0, 20.0)(gen);
    last.take_abs = gen() % 2 == 0;
    return chain;
}

// OpenCV, step by step: each step's exact result rounded to float32, the
// last one's kept exact (compare_images rounds it to the output's depth).
cv::Mat reference_chain(const cv::Mat& src, const std::vector<ConvParams>& steps) {
    cv::Mat in = src;
    for (std::size_t i = 0; i + 1 < steps.size(); ++i) {
        cv::Mat exact = reference_exact(in, steps[i]);
        exact.convertTo(in, CV_32F);
    }
    return reference_exact(in, steps.back());
}

// How far a float32 variant's chain may be from the reference: each step's
// float32 summation bound on what it reads, carried through the later
// steps by their gains (sum|taps| times |scale|).
Tolerance chain_tolerance(const std::vector<Job>& jobs, const cv::Mat& src) {
    double carried = 0.0;
    double largest = 0.0;
    {
        double lo = 0.0, hi = 0.0;
        cv::minMaxLoc(src.reshape(1), &lo, &hi);
        largest = std::max(std::abs(lo), std::abs(hi));
    }
    Tolerance t;
    for (const Job& job : jobs) {
        double gain = 0.0;
        for (double tap : job.params.filter.taps) gain += std::abs(tap);
        gain *= std::abs(job.params.scale);
        const double border =
            job.params.border == BorderMode::constant ? std::abs(job.params.border_value) : 0.0;
        largest = std::max(largest, border);
        carried = carried * gain + float32_sum_tolerance(job, largest).float_absolute +
                  largest * gain * 0x1p-24;  // the step's own rounding to float32
        largest = largest * gain + std::abs(job.params.delta);
    }
    t.float_absolute = carried;
    t.integer_levels = 1.0 + std::ceil(carried);
    return t;
}

struct ChainCase {
    int width = 0, height = 0, channels = 1;
    BorderMode border = BorderMode::reflect101;
    AlphaMode alpha = AlphaMode::keep;
    Depth in = Depth::u8, out = Depth::u8;
    std::uint64_t seed = 0;
};

ChainCase chain_case(int width, int height, int channels, BorderMode border, AlphaMode alpha,
                     Depth in, Depth out, std::uint64_t seed) {
    ChainCase c;
    c.width = width;
    c.height = height;
    c.channels = channels;
    c.border = border;
    c.alpha = alpha;
    c.in = in;
    c.out = out;
    c.seed = seed;
    return c;
}

std::vector<ChainCase> chain_cases(std::uint64_t first_seed) {
    std::vector<ChainCase> cases;
    std::uint64_t seed = first_seed;
    for (BorderMode border : all_border_modes()) {
        for (int channels : {1, 3, 4}) {
            for (Depth in : {Depth::u8, Depth::u16, Depth::f32}) {
                for (Depth out : {Depth::u8, Depth::f32}) {
                    cases.push_back(chain_case(21 + static_cast<int>(seed % 23),
                                               21 + static_cast<int>(seed % 7), channels, border,
                                               seed % 2 == 0 ? AlphaMode::keep : AlphaMode::filter,
                                               in, out, seed));
                    ++seed;
                }
            }
        }
    }
    return cases;
}

// Runs the case's chain with every step on `variants[i % size]`; false,
// with nothing checked, where one of them refuses its step. Counts in
// `as_one` the chains that ran as one filter, and in `banded` those that ran
// as one filter inside and their steps near the edges (core/chain_bands.hpp).
bool run_case(const ChainCase& c, const std::vector<Backend*>& variants, int* as_one = nullptr,
              int* banded = nullptr) {
    const std::vector<ConvParams> chain = random_chain(c.border, c.alpha, c.in, c.out, c.seed);
    const cv::Mat src = random_image(c.width, c.height, cv_type(c.in, c.channels), c.seed);
    const Size2D size = chain_output_size(c.width, c.height, chain);
    if (size.width <= 0 || size.height <= 0) return false;
    cv::Mat actual(static_cast<int>(size.height), static_cast<int>(size.width),
                   cv_type(c.out, c.channels), cv::Scalar::all(0));
    const std::vector<Job> jobs = chain_jobs(const_view(src), mutable_view(actual), chain);
    std::vector<ChainStep> steps;
    std::string names;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        Backend* variant = variants[i % variants.size()];
        if (!variant->can_run(jobs[i]).ok) return false;
        steps.push_back({variant, jobs[i]});
        names += std::string(i ? "+" : "") + std::string(variant->name());
    }
    const PlannedChainRun run = run_planned_chain(steps);
    Tolerance tolerance = chain_tolerance(jobs, src);
    // Where the steps ran as one filter, the result is within that filter's
    // own bound of the exact one, and the reference, whose images between
    // steps are float32, within the steps' bound: the two add.
    if (const std::optional<ChainStep>& one = run.one) {
        CHECK(run.timings.path.find(" steps as one ") != std::string::npos);
        if (as_one) ++*as_one;
        tolerance.float_absolute += one->backend->tolerance(one->job).float_absolute;
        tolerance.integer_levels = 1.0 + std::ceil(tolerance.float_absolute);
    }
    // So too inside, where the steps' bands ran apart from the one filter.
    if (run.timings.path.find(" inside, ") != std::string::npos) {
        const std::optional<ChainBands> bands = chain_bands(chain, c.width, c.height);
        REQUIRE(bands.has_value());
        if (banded) ++*banded;
        const Job inside = one_filter_job(jobs.front().src, jobs.back().dst, bands->inside);
        tolerance.float_absolute += steps.front().backend->tolerance(inside).float_absolute;
        tolerance.integer_levels = 1.0 + std::ceil(tolerance.float_absolute);
    }
    const Comparison cmp = compare_images(reference_chain(src, chain), actual, tolerance);
    INFO(names << " on " << c.width << "x" << c.height << "x" << c.channels << " "
               << depth_name(c.in) << "->" << depth_name(c.out) << ", " << chain.size()
               << " steps, border " << border_name(c.border) << ", seed " << c.seed << ", path "
               << run.timings.path << ": " << cmp.describe());
    CHECK(cmp.ok);
    CHECK(run.timings.filter_ms.size() == 1);
    return true;
}

// Whether `variant` runs a chain of rank-1 steps as their one filter, where
// that filter is `side` x `side` on an image of OpenCV type `type`.
bool runs_as_one(const Backend& variant, int type, int side) {
    const cv::Mat src(64, 64, type, cv::Scalar::all(0));
    cv::Mat dst(64, 64, type);
    Filter f = random_filter(side, side, 1);
    for (int y = 0; y < side; ++y) {
        for (int x = 0; x < side; ++x) {
            f.taps[static_cast<std::size_t>(y) * side + x] = (x + 1) * (y + 1);
        }
    }
    return runs_as_one_filter(
        variant, one_filter_job(const_view(src), mutable_view(dst), centred_params(f)));
}

// Asked of a 13x13 on RGB u8 (on fast, one that fast-separable's kernels
// take).
bool runs_composed_rank1_chains(const Backend& variant) {
    return runs_as_one(variant, CV_8UC3, 13);
}

}  // namespace

TEST_CASE("chain_jobs: float32 images between steps, each the size its border leaves") {
    const cv::Mat src(20, 30, CV_8UC4);
    cv::Mat dst(20 - 2 - 4, 30 - 4 - 0, CV_16UC4);
    const std::vector<ConvParams> chain{step_of(random_filter(3, 3, 1), BorderMode::valid),
                                        step_of(random_filter(3, 5, 2), BorderMode::valid),
                                        step_of(random_filter(1, 1, 3), BorderMode::valid)};
    const Size2D size = chain_output_size(30, 20, chain);
    CHECK(size.width == 26);
    CHECK(size.height == 14);
    const std::vector<Job> jobs = chain_jobs(const_view(src), mutable_view(dst), chain);
    REQUIRE(jobs.size() == 3);
    CHECK(jobs[0].src.data == const_view(src).data);
    CHECK(jobs[0].dst.depth == Depth::f32);
    CHECK(jobs[0].dst.data == nullptr);
    CHECK(jobs[0].dst.width == 28);
    CHECK(jobs[0].dst.height == 18);
    CHECK(jobs[0].dst.channels == 4);
    CHECK(jobs[1].src.width == 28);
    CHECK(jobs[1].src.depth == Depth::f32);
    CHECK(jobs[1].dst.width == 26);
    CHECK(jobs[1].dst.height == 14);
    CHECK(jobs[2].dst.data == mutable_view(dst).data);
    CHECK(jobs[2].dst.depth == Depth::u16);
    CHECK(chain_label({step_of(random_filter(1, 1, 1), BorderMode::wrap)}) == "random");
}

TEST_CASE("a chain on cpu-ref and on cpu equals OpenCV run step by step in float32") {
    for (const char* name : {"cpu-ref", "cpu"}) {
        Backend* variant = find_backend(name);
        REQUIRE(variant != nullptr);
        int ran = 0;
        int as_one = 0;
        for (const ChainCase& c : chain_cases(100)) ran += run_case(c, {variant}, &as_one);
        INFO(name);
        CHECK(ran == static_cast<int>(chain_cases(100).size()));
        // cpu runs symmetric rank-1 steps under reflecting borders, and any
        // rank-1 steps under wrap and valid, as one filter; cpu-ref never.
        if (std::string(name) == "cpu-ref") CHECK(as_one == 0);
        if (std::string(name) == "cpu") CHECK(as_one >= 20);
    }
}

TEST_CASE("a chain that mixes CPU and CUDA variants is refused") {
    if (skip_without_device()) return;
    const cv::Mat src(8, 8, CV_8UC1, cv::Scalar::all(1));
    cv::Mat dst(8, 8, CV_8UC1);
    const std::vector<ConvParams> chain{step_of(random_filter(3, 3, 1), BorderMode::reflect101),
                                        step_of(random_filter(3, 3, 2), BorderMode::reflect101)};
    const std::vector<Job> jobs = chain_jobs(const_view(src), mutable_view(dst), chain);
    CHECK_THROWS_AS(
        run_chain({{find_backend("cpu"), jobs[0]}, {find_backend("fast"), jobs[1]}}, {}),
        std::invalid_argument);
}

TEST_CASE("every CUDA variant runs chains on the device like OpenCV step by step", "[gpu]") {
    if (skip_without_device()) return;
    Backend* fast = find_backend("fast");
    REQUIRE(fast != nullptr);
    for (const auto& b : all_backends()) {
        if (!b->uses_cuda()) continue;
        Backend* variant = b.get();
        // Every step on it; the first step on it and the rest on fast (a
        // path that takes only integer or gray inputs runs first, where the
        // image is the input); the first on fast and the rest on it.
        int ran = 0;
        int as_one = 0;
        int banded = 0;
        for (const ChainCase& c : chain_cases(500)) {
            ran += run_case(c, {variant}, &as_one, &banded);
            ran += run_case(c, {variant, fast, fast}, &as_one, &banded);
            ran += run_case(c, {fast, variant, variant}, &as_one, &banded);
        }
        INFO(variant->name() << " ran " << ran << " chains, " << as_one << " as one filter, "
                             << banded << " as one filter inside");
        const bool composes = runs_composed_rank1_chains(*variant);
        if (composes && variant->parent().empty()) CHECK(as_one > 0);
        // Every step on it (bands only run so).
        if (variant->parent().empty()) CHECK((banded > 0) == composes);
        // A named path runs the jobs its composite gives it, and one that
        // takes only u8 to u8 (fast.walk-u8) no step of a chain: every
        // step reads or writes the float32 images between steps.
        if (variant->parent().empty()) CHECK(ran > 0);
    }
    // Steps on three variants, the images between them on the device.
    int mixed = 0;
    for (const ChainCase& c : chain_cases(900)) {
        mixed += run_case(c, {find_backend("fast"), find_backend("smem"), find_backend("naive")});
    }
    CHECK(mixed > 0);
}

TEST_CASE("chains of rank-1 steps that compose only inside run so on the device", "[gpu]") {
    if (skip_without_device()) return;
    // Steps not symmetric (seeds 3 mod 4: core/chain_bands.hpp) under every
    // border that keeps the size but wrap, on images larger than four reaches.
    for (const char* name : {"fast-separable", "separable", "fft", "fast"}) {
        Backend* variant = find_backend(name);
        REQUIRE(variant != nullptr);
        const bool before_hopper = probe_devices().devices.front().cc_major < 9;
        if (std::string(name) == "fast" && before_hopper) continue;  // fast refuses every job
        int ran = 0;
        int banded = 0;
        int runs_inside = 0;
        std::uint64_t seed = 3;
        for (BorderMode border : {BorderMode::replicate, BorderMode::constant,
                                  BorderMode::reflect101, BorderMode::reflect}) {
            for (int channels : {1, 3, 4}) {
                for (Depth in : {Depth::u8, Depth::f32}) {
                    for (Depth out : {Depth::u8, Depth::f32}) {
                        const ChainCase c = chain_case(
                            200 + static_cast<int>(seed % 13), 120 + static_cast<int>(seed % 5),
                            channels, border, seed % 8 == 3 ? AlphaMode::keep : AlphaMode::filter,
                            in, out, seed);
                        seed += 4;
                        // Steps of one tap under a mirroring border are
                        // symmetric: they compose everywhere.
                        const std::vector<ConvParams> chain =
                            random_chain(c.border, c.alpha, c.in, c.out, c.seed);
                        const std::optional<ChainBands> bands =
                            chain_bands(chain, c.width, c.height);
                        if (!bands) continue;
                        if (!run_case(c, {variant}, nullptr, &banded)) continue;
                        ++ran;
                        // Unless the variant cannot run the one filter
                        // (separable takes sides up to a limit) or runs
                        // its steps (fast, where the one filter would go to
                        // its dense paths).
                        const ConstImageView src{nullptr, c.width, c.height, c.channels, c.in, 0};
                        ImageView dst = float32_view(c.width, c.height, c.channels);
                        dst.depth = c.out;
                        dst.row_bytes = static_cast<std::int64_t>(dst.packed_row_bytes());
                        runs_inside +=
                            runs_as_one_filter(*variant, one_filter_job(src, dst, bands->inside));
                    }
                }
            }
        }
        INFO(name << " ran " << ran << " chains, " << banded << " as one filter inside, "
                  << runs_inside << " whose one filter it runs");
        CHECK(ran > 0);
        CHECK(banded == runs_inside);
        CHECK(banded > ran / 2);
    }
}

// fast runs a chain as its one filter where that filter goes to
// fast.separable or to its strip path (up to 7x7), and the steps where it
// would go to its larger dense paths (kernels/fast/fast_paths.cu).
TEST_CASE("fast runs a chain as one filter where that filter is cheap there", "[gpu]") {
    if (skip_without_device()) return;
    const Backend* fast = find_backend("fast");
    REQUIRE(fast != nullptr);
    if (probe_devices().devices.front().cc_major < 9) return;  // fast refuses every job
    CHECK(runs_as_one(*fast, CV_8UC1, 5));                     // the strip path
    CHECK(runs_as_one(*fast, CV_32FC1, 7));                    // the strip path
    CHECK(runs_as_one(*fast, CV_8UC1, 13));                    // fast.separable
    CHECK(runs_as_one(*fast, CV_8UC3, 5));                     // fast.separable
    CHECK(runs_as_one(*fast, CV_32FC1, 13));                   // fast.separable
    CHECK_FALSE(runs_as_one(*fast, CV_32FC3, 13));             // the tiles
    CHECK_FALSE(runs_as_one(*fast, CV_32FC1, 33));             // the tensor cores
    CHECK_FALSE(runs_as_one(*fast, CV_16UC1, 5));              // the tensor cores
    // Its named paths as it does: fast.separable and the strip path run
    // the one filter, the tiles their steps.
    CHECK(runs_as_one(*find_backend("fast.separable"), CV_8UC1, 13));
    CHECK(runs_as_one(*find_backend("fast.strips"), CV_8UC1, 5));
    CHECK_FALSE(runs_as_one(*find_backend("fast.tiles"), CV_8UC1, 13));
}

TEST_CASE("CUDA chains, a quick set for compute-sanitizer", "[gpu-quick]") {
    if (skip_without_device()) return;
    int ran = 0;
    for (const ChainCase& c : chain_cases(1300)) {
        if (c.seed % 9 != 0) continue;
        ran += run_case(
            c, {find_backend("fast"), find_backend("fast-separable"), find_backend("naive")});
        ran += run_case(c, {find_backend("fast")});
    }
    // One filter inside and the steps near the edges.
    const ChainCase c =
        chain_case(160, 96, 3, BorderMode::replicate, AlphaMode::keep, Depth::u8, Depth::u8, 7);
    int banded = 0;
    ran += run_case(c, {find_backend("fast-separable")}, nullptr, &banded);
    CHECK(banded == 1);
    CHECK(ran > 0);
}

}  // namespace cudaconv::test
