// Every CUDA variant against cpu-ref, over the product of cases of
// docs/SPEC.md, "Tolerances". Without a device these tests print
// "SKIPPED: no CUDA device" and CTest reports them as skipped.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "bench/cases.hpp"
#include "variants/registry.hpp"
#include "core/tuning.hpp"
#include "filters/named.hpp"
#include "kernels/runtime/device_info.hpp"
#include "support/compare.hpp"
#include "support/opencv_reference.hpp"
#include "support/random_image.hpp"
#include "support/skip_without_device.hpp"

namespace cudaconv::test {
namespace {

std::vector<Backend*> cuda_backends() {
    std::vector<Backend*> list;
    for (const auto& b : all_backends()) {
        if (b->uses_cuda()) list.push_back(b.get());
    }
    return list;
}

Backend* variant_named(std::string_view name) {
    Backend* variant = find_backend(name);
    INFO(name);
    REQUIRE(variant != nullptr);
    return variant;
}

// Whether some registered variant is a named path of `variant`.
bool is_composite(const Backend& variant) {
    for (const auto& b : all_backends()) {
        if (b->parent() == variant.name()) return true;
    }
    return false;
}

// A variant a case runs, and the tuning values it is given
// (RunOptions::tuning); it gets those it reads (Backend::tuning_params), as
// bench's --param gives them, so that one set can serve a composite and the
// named paths that read part of it.
struct Pick {
    Backend* variant = nullptr;
    Tuning tuning;
};

Pick pick_of(std::string_view name, Tuning tuning = {}) { return {variant_named(name), tuning}; }

struct Case {
    int width = 1, height = 1;
    int filter_width = 1, filter_height = 1;
    int channels = 1;
    BorderMode border = BorderMode::reflect101;
    Depth in_depth = Depth::u8;
    Depth out_depth = Depth::u8;
    std::uint64_t seed = 0;
    bool centred_anchor = false;      // the anchor fast needs, instead of a random one
    bool rank1 = false;               // always an outer product (fast-separable's jobs)
    bool whole_border_value = false;  // a constant border value a u8 sample can hold
    // Whole taps in [-128, 127], small or to the ends of that range (fast's
    // integer path), and scale 1 with delta 0 (its integer-only finish).
    bool integer_taps = false;
    bool plain_finish = false;
    std::optional<std::uint64_t> filter_seed;  // the taps' own seed, to repeat a filter
};

std::ostream& operator<<(std::ostream& os, const Case& c) {
    return os << c.width << "x" << c.height << "x" << c.channels << " " << depth_name(c.in_depth)
              << "->" << depth_name(c.out_depth) << ", filter " << c.filter_width << "x"
              << c.filter_height << ", border " << border_name(c.border) << ", seed " << c.seed;
}

// Parameters drawn from the seed: anchor, border value, scale (often
// 1/sum|taps| so that integer outputs are not all saturated), delta, abs,
// and what happens to a 4th channel.
ConvParams random_params(const Case& c, std::mt19937_64& gen) {
    ConvParams p;
    const std::uint64_t taps_seed = c.filter_seed.value_or(c.seed);
    p.filter = random_filter(c.filter_width, c.filter_height, taps_seed);
    if (c.rank1 || taps_seed % 3 == 0) {
        // An outer product of random row and column taps: rank 1, so the
        // separable variant runs too (dense random filters it refuses).
        const Filter row = random_filter(c.filter_width, 1, taps_seed + 1);
        const Filter column = random_filter(1, c.filter_height, taps_seed + 2);
        for (int j = 0; j < c.filter_height; ++j) {
            for (int i = 0; i < c.filter_width; ++i) {
                p.filter.taps[static_cast<std::size_t>(j) * c.filter_width + i] =
                    column.taps[j] * row.taps[i];
            }
        }
    }
    if (c.integer_taps) {
        std::mt19937_64 tap_gen(taps_seed);
        const int range = taps_seed % 2 == 0 ? 3 : 127;  // like edge's taps, or any s8
        std::uniform_int_distribution<int> tap(-range, range);
        for (double& t : p.filter.taps) t = tap(tap_gen);
        if (taps_seed % 4 == 1) p.filter.taps.front() = -128.0;
    }
    p.anchor_x = std::uniform_int_distribution<int>(0, c.filter_width - 1)(gen);
    p.anchor_y = std::uniform_int_distribution<int>(0, c.filter_height - 1)(gen);
    if (c.centred_anchor) {
        p.anchor_x = c.filter_width / 2;
        p.anchor_y = c.filter_height / 2;
    }
    p.border = c.border;
    p.border_value = std::uniform_real_distribution<double>(0.0, 200.0)(gen);
    if (c.whole_border_value) p.border_value = std::round(p.border_value);
    double abs_sum = 0.0;
    for (double t : p.filter.taps) abs_sum += std::abs(t);
    p.scale = (gen() % 3 == 0) ? 1.0 : 1.0 / abs_sum;
    if (c.in_depth == Depth::u16 && c.out_depth == Depth::u8) p.scale /= 256.0;
    p.delta = std::uniform_real_distribution<double>(-20.0, 40.0)(gen);
    p.take_abs = gen() % 2 == 0;
    p.alpha = gen() % 2 == 0 ? AlphaMode::keep : AlphaMode::filter;
    if (c.plain_finish) {
        p.scale = 1.0;
        p.delta = 0.0;
    }
    return p;
}

struct VariantTally {
    int passed = 0;
    int failed = 0;
    std::map<std::string, int> refusals;
    std::map<std::string, int> paths;  // RunTimings::path of a composite's runs
};

// What a run says of its path: a named path its own name, a composite one
// of its named paths (whose parent it is), any other variant none.
void check_path(const Backend& variant, const RunTimings& timings) {
    INFO(variant.name() << " ran " << timings.path);
    if (!variant.parent().empty()) {
        CHECK(timings.path == variant.name());
    } else if (is_composite(variant)) {
        const Backend* path = find_backend(timings.path);
        REQUIRE(path != nullptr);
        CHECK(path->parent() == variant.name());
    } else {
        CHECK(timings.path.empty());
    }
}

// Runs the case's job on each of `picks`, or, with `first_only`, on the
// first of them that can run it (a named path ahead of the composite or the
// path that takes the rest); then only where none can is a refusal counted,
// the last one's.
void run_case(const Case& c, const std::vector<Pick>& picks, bool first_only,
              std::map<std::string, VariantTally>& tally) {
    std::mt19937_64 gen(c.seed);
    const cv::Mat src = random_image(c.width, c.height, cv_type(c.in_depth, c.channels), c.seed);
    const ConvParams params = random_params(c, gen);
    const Size2D size = output_size(c.width, c.height, params);
    if (size.width <= 0 || size.height <= 0) return;  // valid with a filter larger than the image

    cv::Mat expected(static_cast<int>(size.height), static_cast<int>(size.width),
                     cv_type(c.out_depth, c.channels));
    find_backend("cpu-ref")->run(Job{const_view(src), mutable_view(expected), params}, {});

    for (std::size_t i = 0; i < picks.size(); ++i) {
        Backend* variant = picks[i].variant;
        cv::Mat actual(expected.size(), expected.type(), cv::Scalar::all(0));
        const Job job{const_view(src), mutable_view(actual), params};
        VariantTally& t = tally[std::string(variant->name())];
        const Support support = variant->can_run(job);
        if (!support.ok) {
            if (!first_only || i + 1 == picks.size()) ++t.refusals[support.reason];
            continue;
        }
        RunOptions options;
        options.tuning = tuning_for(*variant, picks[i].tuning);
        {
            INFO(variant->name() << "'s tuning");
            CHECK(tuning_refusal(options.tuning, variant->tuning_params(), variant->name()) == "");
        }
        const RunTimings timings = variant->run(job, options);
        check_path(*variant, timings);
        if (!timings.path.empty()) ++t.paths[timings.path];
        const Comparison cmp = compare_images(expected, actual, variant->tolerance(job));
        if (cmp.ok) {
            ++t.passed;
        } else {
            ++t.failed;
            FAIL_CHECK(variant->name() << " on " << c << ": " << cmp.describe());
        }
        if (first_only) break;
    }
}

// Every variant of `variants` on the case's job, as each runs by default.
void run_case(const Case& c, const std::vector<Backend*>& variants,
              std::map<std::string, VariantTally>& tally) {
    std::vector<Pick> picks;
    for (Backend* variant : variants) picks.push_back({variant, {}});
    run_case(c, picks, false, tally);
}

void report(const std::map<std::string, VariantTally>& tally) {
    for (const auto& [name, t] : tally) {
        std::cout << name << ": " << t.passed << " passed, " << t.failed << " failed";
        int refused = 0;
        for (const auto& [reason, n] : t.refusals) refused += n;
        std::cout << ", " << refused << " not supported\n";
        for (const auto& [path, n] : t.paths) {
            if (path != name) std::cout << "    ran " << path << " " << n << "x\n";
        }
        for (const auto& [reason, n] : t.refusals) {
            std::cout << "    not supported (" << n << "x): " << reason << "\n";
        }
    }
}

// No refusal where every job was meant to run, and some passed.
void check_all_ran(const std::map<std::string, VariantTally>& tally) {
    for (const auto& [name, t] : tally) {
        INFO(name);
        CHECK(t.refusals.empty());
    }
}

int passed(std::map<std::string, VariantTally>& tally, const char* name) {
    return tally[name].passed;
}

// Sizes of docs/SPEC.md, "Tolerances": 1x1, 1xN, Nx1, primes, 255/256/257; kept
// short in one direction where the other is long so cpu-ref stays quick.
const std::vector<std::pair<int, int>> kImageSizes{{1, 1},   {1, 37},  {41, 1},  {13, 7}, {31, 17},
                                                   {255, 3}, {256, 5}, {257, 9}, {67, 61}};
// Filter sizes: 1, 2, 3, 5, 8, 17, 31, non-square, and larger than most
// of the images above.
const std::vector<std::pair<int, int>> kFilterSizes{{1, 1},   {2, 2},   {3, 3}, {5, 5}, {8, 8},
                                                    {17, 17}, {31, 31}, {1, 5}, {7, 3}, {45, 2}};
const std::vector<Depth> kDepths{Depth::u8, Depth::u16, Depth::f32};

}  // namespace

TEST_CASE("CUDA variants equal cpu-ref over sizes, filters, borders, channels, depths", "[gpu]") {
    if (skip_without_device()) return;
    const std::vector<Backend*> variants = cuda_backends();
    std::map<std::string, VariantTally> tally;
    std::uint64_t seed = 1000;
    int depth_pick = 0;
    for (BorderMode border : all_border_modes()) {
        for (const auto& [w, h] : kImageSizes) {
            for (const auto& [fw, fh] : kFilterSizes) {
                for (int channels : {1, 3, 4}) {
                    // Every input x output depth pair comes round in turn.
                    const Depth in = kDepths[depth_pick % 3];
                    const Depth out = kDepths[(depth_pick / 3) % 3];
                    ++depth_pick;
                    run_case({w, h, fw, fh, channels, border, in, out, ++seed}, variants, tally);
                }
            }
        }
    }
    report(tally);
}

TEST_CASE("CUDA variants on larger images, every depth pair", "[gpu]") {
    if (skip_without_device()) return;
    const std::vector<Backend*> variants = cuda_backends();
    std::map<std::string, VariantTally> tally;
    std::uint64_t seed = 90000;
    for (Depth in : kDepths) {
        for (Depth out : kDepths) {
            for (const auto& [fw, fh] :
                 std::vector<std::pair<int, int>>{{3, 3}, {15, 15}, {5, 1}}) {
                run_case({523, 389, fw, fh, 3, BorderMode::reflect101, in, out, ++seed}, variants,
                         tally);
            }
        }
    }
    for (BorderMode border : all_border_modes()) {
        run_case({1031, 769, 7, 7, 4, border, Depth::u8, Depth::u8, ++seed}, variants, tally);
    }
    report(tally);
}

// fast's CUDA-core paths take only odd square filters with the anchor at
// the centre, on u8 and f32 inputs (fast.strips for the small sides,
// fast.tiles for the rest, and for any of them by name): the jobs above
// give them few of those, so here is a product of its own, every size it is
// built for, with widths whose rows end in a partial vector, images smaller
// than the filter, and images of several tiles (1 KB by 4 rows for u8; for
// f32 by 32 rows to 7x7, by 16 from 9x9) so that a block walks more than
// one. Half the constant borders have a whole value, which u8 tiles hold
// (the border is then filled in shared memory), half a fractional one (edge
// tiles then read through the border policy from global memory).
// fast's bulk copies need Hopper: an older GPU refuses every job, by design.
bool skip_before_hopper() {
    const DeviceInfo& device = probe_devices().devices.front();
    if (device.cc_major >= 9) return false;
    std::cout << "SKIPPED: fast needs compute capability 9.0; " << device.name << " is "
              << device.cc_major << "." << device.cc_minor << "\n";
    return true;
}

TEST_CASE("fast over its own jobs: every size, border, channel count, depth pair", "[gpu]") {
    if (skip_without_device() || skip_before_hopper()) return;
    Backend* fast = variant_named("fast");
    Backend* strips = variant_named("fast.strips");
    Backend* tiles = variant_named("fast.tiles");
    std::map<std::string, VariantTally> tally;
    std::uint64_t seed = 70000;
    const std::vector<std::pair<int, int>> sizes{{1, 1},   {5, 3},    {16, 2},  {37, 19},
                                                 {128, 9}, {257, 33}, {700, 70}};
    int depth_pick = 0;
    for (int side = 3; side <= 15; side += 2) {
        for (BorderMode border : all_border_modes()) {
            if (border == BorderMode::valid) continue;
            for (const auto& [w, h] : sizes) {
                Tuning tuning;
                // About half the time, 3 blocks walk all of the image's tiles.
                if (depth_pick % 6 < 3) tuning.set("max_blocks", 3);
                // fast sends sides 3, 5 and 7 to fast.strips, 9 to 15 to
                // fast.tiles (fast.mma, whose own test is below, takes
                // colour u8 at 15 only from 4 megapixels); two thirds of
                // the cases run fast, a third fast.tiles by name, which
                // runs the strips' jobs too.
                const bool tiles_only = depth_pick % 9 >= 6;
                // A quarter of the time, strip bands of 1 or 5 rows: many
                // bands down, fewer input rows than the ring of rows copied
                // ahead holds, and the last band cut short.
                if (depth_pick % 4 == 1) tuning.set("band_rows", depth_pick % 8 == 1 ? 1 : 5);
                // A quarter of the time, a head of rising bands (StripHead)
                // at the top: heights 1, 1, 2, 2, 3, 3 where the image is
                // taller than their 12 rows (else none).
                if (depth_pick % 4 == 3) {
                    tuning.set("head_low", 1);
                    tuning.set("head_high", 3);
                    tuning.set("head_group", 2);
                }
                // Gray f32 3x3 goes to fast.registers (blocks of 4 rows); a
                // fifth of the cases in blocks of 8 rows, a fifth to
                // fast.strips by name instead (fast for what it refuses).
                const bool strips_first = depth_pick % 5 == 2;
                if (depth_pick % 5 == 4) tuning.set("block_rows", 8);
                std::vector<Pick> picks{{fast, tuning}};
                if (strips_first) picks = {{strips, tuning}, {fast, tuning}};
                if (tiles_only) picks = {{tiles, tuning}};
                for (int channels : {1, 3, 4}) {
                    const Depth in = depth_pick % 2 == 0 ? Depth::u8 : Depth::f32;
                    const Depth out = kDepths[(depth_pick / 2) % 3];
                    ++depth_pick;
                    Case c{w, h, side, side, channels, border, in, out, ++seed};
                    c.centred_anchor = true;
                    c.whole_border_value = depth_pick % 4 < 2;
                    run_case(c, picks, true, tally);
                }
            }
        }
    }
    report(tally);
    check_all_ran(tally);
    CHECK(passed(tally, "fast") > 0);
    CHECK(passed(tally, "fast.strips") > 0);
    CHECK(passed(tally, "fast.tiles") > 0);
    // fast took each of its CUDA-core paths, and on images this small
    // never the tensor cores.
    for (const char* path : {"fast.registers", "fast.strips", "fast.tiles"}) {
        INFO(path);
        CHECK(tally["fast"].paths[path] > 0);
    }
    CHECK(tally["fast"].paths.count("fast.mma") == 0);
}

// fast.strips sums u8 images under integer taps in [-128, 127] with DP4A
// (its integer path), and so does fast.walk-u8 at 3x3 (into u8, every
// channel filtered, the plain finish): every side, border, channel count
// and output depth, taps small (as edge's) and to the ends of s8, the plain
// finish (scale 1, delta 0: integers clamped as they are) and the float
// one, the strip sizes of the test above, and bands of 1 and 5 rows. The
// cases with tuning values run the paths by name (the walk where it can,
// as fast does), each with its own band height; the others run fast.
TEST_CASE("fast's integer path: integer taps on u8 input, every side, border, channel count",
          "[gpu]") {
    if (skip_without_device() || skip_before_hopper()) return;
    Backend* fast = variant_named("fast");
    Backend* walk = variant_named("fast.walk-u8");
    Backend* strips = variant_named("fast.strips");
    std::map<std::string, VariantTally> tally;
    std::uint64_t seed = 75000;
    const std::vector<std::pair<int, int>> sizes{{1, 1},   {5, 3},    {16, 2},  {37, 19},
                                                 {128, 9}, {257, 33}, {700, 70}};
    int pick = 0;
    for (int side = 3; side <= 7; side += 2) {
        for (BorderMode border : all_border_modes()) {
            if (border == BorderMode::valid) continue;
            for (const auto& [w, h] : sizes) {
                Tuning strip_tuning;
                if (pick % 4 == 1) strip_tuning.set("band_rows", pick % 8 == 1 ? 1 : 5);
                // 3x3 into u8 with the plain finish and every channel
                // filtered goes to fast.walk-u8 (bands of 8 rows); a fifth
                // of the sizes to fast.strips instead, a third in bands of 4
                // rows (a block) or of 20 (the ring of 16 rows goes round).
                // Images this small go to the tail walk whole (bands of a
                // block): a quarter of the sizes to the walk of whole bands
                // alone, a quarter to both (the tail 9 rows, more to leave
                // the bands above whole).
                // (pick counts the channels too, so it is a multiple of 3
                // here: the size's place is pick / 3.)
                const int size_case = pick / 3;
                const bool no_walk = size_case % 5 == 2;
                Tuning walk_tuning;
                if (size_case % 3 == 1) walk_tuning.set("band_rows", size_case % 2 == 0 ? 4 : 20);
                if (size_case % 4 != 0) walk_tuning.set("tail_rows", size_case % 4 == 1 ? 0 : 9);
                std::vector<Pick> picks;
                if (no_walk || !strip_tuning.empty() || !walk_tuning.empty()) {
                    if (!no_walk) picks.push_back({walk, walk_tuning});
                    picks.push_back({strips, strip_tuning});
                } else {
                    picks.push_back({fast, {}});
                }
                for (int channels : {1, 3, 4}) {
                    ++pick;
                    Case c{w,         h,
                           side,      side,
                           channels,  border,
                           Depth::u8, pick % 4 == 3 ? kDepths[pick / 4 % 3] : Depth::u8,
                           ++seed};
                    c.centred_anchor = true;
                    c.whole_border_value = true;  // else fast.tiles takes constant borders
                    c.integer_taps = true;
                    c.plain_finish = pick % 2 == 0;
                    run_case(c, picks, true, tally);
                }
            }
        }
    }
    report(tally);
    check_all_ran(tally);
    CHECK(passed(tally, "fast") > 0);
    CHECK(passed(tally, "fast.walk-u8") > 0);
    CHECK(passed(tally, "fast.strips") > 0);
    // fast took the walk and the strips for these jobs, nothing else.
    CHECK(tally["fast"].paths["fast.walk-u8"] > 0);
    CHECK(tally["fast"].paths["fast.strips"] > 0);
    CHECK(tally["fast"].paths.size() == 2);
}

// fast's tensor-core path (kernels/fast/dense_mma.cu), fast.mma by name, on
// every job it can run: filters of every shape up to 33x33 (odd and even, square or not,
// one tap wide or tall), random anchors, every border with `valid`, 1 to 4
// channels, every depth pair; images of one tile, of tiles cut short at
// the right and bottom, and smaller than the filter; half the time 3 blocks
// walk all the (tile, channel) items.
TEST_CASE("fast's tensor-core path: every shape to 33x33, border, channel count, depth pair",
          "[gpu]") {
    if (skip_without_device() || skip_before_hopper()) return;
    Backend* mma = variant_named("fast.mma");
    std::map<std::string, VariantTally> tally;
    std::uint64_t seed = 77000;
    const std::vector<std::pair<int, int>> filters{{1, 1},   {2, 3},   {3, 3},   {4, 7},   {7, 7},
                                                   {9, 9},   {12, 5},  {15, 15}, {16, 16}, {17, 17},
                                                   {24, 31}, {31, 31}, {33, 33}, {33, 1},  {1, 33}};
    const std::vector<std::pair<int, int>> sizes{{5, 3}, {64, 64}, {70, 41}, {150, 203}};
    int pick = 0;
    for (const auto& [fw, fh] : filters) {
        for (BorderMode border : all_border_modes()) {
            for (const auto& [w, h] : sizes) {
                Tuning tuning;
                if (pick % 4 < 2) tuning.set("max_blocks", 3);
                for (int n = 0; n < 2; ++n) {
                    const int channels = 1 + (pick + n) % 4;
                    const Depth in = kDepths[pick % 3];
                    const Depth out = kDepths[(pick / 3) % 3];
                    ++pick;
                    run_case({w, h, fw, fh, channels, border, in, out, ++seed}, {{mma, tuning}},
                             true, tally);
                }
            }
        }
    }
    report(tally);
    check_all_ran(tally);
    CHECK(passed(tally, "fast.mma") > 0);
}

// The tensor-core path splits samples into TF32 parts and multiplies the
// band's zeros too, so a tile holding an infinity is summed in plain floats
// instead (else 0 x Inf would turn outputs that never read it into NaN).
// Infinities of both signs, far apart, in f32 images: cpu-ref's outputs are
// infinite where their windows hold one and finite elsewhere, and
// fast.mma's must equal them, with no NaN. The tolerance is the finite samples'.
TEST_CASE("fast's tensor-core path: infinities in a float image", "[gpu]") {
    if (skip_without_device() || skip_before_hopper()) return;
    Backend* fast = variant_named("fast.mma");
    for (int channels : {1, 3}) {
        for (const auto& [fw, fh] : std::vector<std::pair<int, int>>{{9, 9}, {17, 5}}) {
            INFO(channels << " channels, filter " << fw << "x" << fh);
            cv::Mat src = random_image(200, 150, CV_MAKETYPE(CV_32F, channels), 31);
            ConvParams params;
            params.filter = random_filter(fw, fh, 32);
            params.anchor_x = fw / 2;
            params.anchor_y = fh / 2;
            const Job finite_job{const_view(src), {}, params};
            const Tolerance tolerance = fast->tolerance(finite_job);
            const float inf = std::numeric_limits<float>::infinity();
            src.ptr<float>(30)[40 * channels] = inf;
            src.ptr<float>(120)[170 * channels + channels - 1] = -inf;

            cv::Mat expected(src.size(), src.type());
            find_backend("cpu-ref")->run(Job{const_view(src), mutable_view(expected), params}, {});
            cv::Mat actual(src.size(), src.type(), cv::Scalar::all(0));
            const Job job{const_view(src), mutable_view(actual), params};
            REQUIRE(fast->can_run(job).ok);
            CHECK(fast->run(job, {}).path == "fast.mma");
            CHECK(cv::checkRange(expected, true) == false);  // the infinities reached outputs
            const Comparison cmp = compare_images(expected, actual, tolerance);
            CHECK(cmp.ok);
            if (!cmp.ok) std::cout << cmp.describe() << "\n";
        }
    }
}

// fast-separable takes odd square rank-1 filters 3..31 with a centred
// anchor: every side, border and channel count (2 has strips of its own
// width), on widths that end a strip part way (600 gray pixels are three
// strips) and heights that take several strips. Its two paths, by name:
//  - fast-separable.strips, the CUDA-core path: half the cases fix the
//    strip height at 16 rows and half at 96, so that strips of one step and
//    strips whose ring of intermediate rows wraps round both run.
//  - fast-separable.mma, the tensor-core path (which takes every u8 job
//    with a whole u8 border value): tiles of 64x64 cut short at the right
//    and bottom (70x41, 150x203, 600x45), tiles whose staged rows reach past
//    the top and bottom (150x203, 600x45), and 3 blocks walking all the
//    tiles.
TEST_CASE("fast-separable over its own jobs: every side, border, channel count, depth pair",
          "[gpu]") {
    if (skip_without_device()) return;
    std::map<std::string, VariantTally> tally;
    std::uint64_t seed = 80000;
    const std::vector<std::pair<int, int>> sizes{{1, 1}, {7, 3}, {70, 41}, {150, 203}, {600, 45}};
    int pick = 0;
    const std::vector<Pick> paths{pick_of("fast-separable.strips", {{"strip_rows", 16}}),
                                  pick_of("fast-separable.strips", {{"strip_rows", 96}}),
                                  pick_of("fast-separable.mma", {{"max_blocks", 3}})};
    for (const Pick& path : paths) {
        const bool tensor_cores = path.variant->name() == "fast-separable.mma";
        for (int side = 3; side <= 31; side += 2) {
            for (BorderMode border : all_border_modes()) {
                if (border == BorderMode::valid) continue;
                for (const auto& [w, h] : sizes) {
                    for (int channels : {1, 2, 3, 4}) {
                        const Depth in = tensor_cores ? Depth::u8 : kDepths[pick % 3];
                        const Depth out = kDepths[(pick / 3) % 3];
                        ++pick;
                        Case c{w, h, side, side, channels, border, in, out, ++seed};
                        c.centred_anchor = true;
                        c.rank1 = true;
                        // The tensor-core path takes a whole u8 border value.
                        c.whole_border_value = tensor_cores;
                        run_case(c, {path}, true, tally);
                    }
                }
            }
        }
    }
    report(tally);
    check_all_ran(tally);
    CHECK(passed(tally, "fast-separable.strips") > 0);
    CHECK(passed(tally, "fast-separable.mma") > 0);
}

// fft keeps its plans and the filter's transform for the next run of the
// same shape and taps (a batch's images). The same taps on three images of
// one size (with their own anchors, scales and border values), then other
// taps, then another size, then the first taps again: each against cpu-ref,
// so a transform kept when it should have been rebuilt shows.
TEST_CASE("fft reuses what it prepared only for the same shape and taps", "[gpu]") {
    if (skip_without_device()) return;
    const std::vector<Backend*> fft{find_backend("fft")};
    REQUIRE(fft.front() != nullptr);
    std::map<std::string, VariantTally> tally;
    std::uint64_t seed = 90000;
    const std::vector<std::tuple<int, int, std::uint64_t>> runs{
        {200, 150, 1}, {200, 150, 1}, {200, 150, 1}, {200, 150, 2}, {210, 150, 2}, {200, 150, 1}};
    for (const auto& [w, h, taps] : runs) {
        Case c{w, h, 17, 17, 3, BorderMode::reflect101, Depth::u8, Depth::u8, ++seed};
        c.filter_seed = taps;
        run_case(c, fft, tally);
    }
    report(tally);
    CHECK(tally["fft"].passed == static_cast<int>(runs.size()));
}

// A thread's runs keep their device taps and upload them only when they
// change: image after image of one size with taps that change, come back,
// and change size, every variant against cpu-ref.
TEST_CASE("CUDA variants use each run's own taps when a run of the same size kept others",
          "[gpu][gpu-quick]") {
    if (skip_without_device()) return;
    const std::vector<std::tuple<int, std::uint64_t>> runs{{5, 1}, {5, 2}, {5, 1},
                                                           {3, 3}, {7, 4}, {5, 1}};
    std::map<std::string, VariantTally> tally;
    for (const auto& [side, taps] : runs) {
        Case c{96, 64, side, side, 3, BorderMode::reflect101, Depth::u8, Depth::u8, 95000};
        c.filter_seed = taps;
        run_case(c, cuda_backends(), tally);
    }
    report(tally);
    for (const auto& [name, t] : tally) {
        INFO(name);
        CHECK(t.failed == 0);
    }
}

// A small set for the sanitizers, which run 10-100x slower.
TEST_CASE("CUDA variants, a quick set for compute-sanitizer", "[gpu-quick]") {
    if (skip_without_device()) return;
    const std::vector<Backend*> variants = cuda_backends();
    std::map<std::string, VariantTally> tally;
    std::uint64_t seed = 50000;
    for (BorderMode border : all_border_modes()) {
        run_case({37, 29, 5, 3, 4, border, Depth::u8, Depth::u8, ++seed}, variants, tally);
        run_case({1, 1, 3, 3, 1, border, Depth::f32, Depth::f32, ++seed}, variants, tally);
        run_case({67, 5, 17, 17, 3, border, Depth::u16, Depth::f32, ++seed}, variants, tally);
        if (border != BorderMode::valid) {  // fast's own jobs
            for (int channels : {1, 3, 4}) {
                Case c{53, 21, 5, 5, channels, border, Depth::u8, Depth::u8, ++seed};
                c.centred_anchor = true;
                run_case(c, variants, tally);
                c = {19, 6, 3, 3, channels, border, Depth::f32, Depth::u16, ++seed};
                c.centred_anchor = true;
                run_case(c, variants, tally);
                c = {70, 37, 17, 17, channels, border, Depth::u8, Depth::f32, ++seed};
                c.centred_anchor = true;
                c.rank1 = true;  // fast-separable, a ring of 32 rows
                run_case(c, variants, tally);
            }
            // fast.strips on a gray u8 image between 1 and 2 vectors
            // wide: its outer lanes reach more than the row's width past it
            // (initcheck saw wrap read the row's padding there).
            {
                Case c{20, 9, 3, 3, 1, border, Depth::u8, Depth::u8, ++seed};
                c.centred_anchor = true;
                c.whole_border_value = true;
                run_case(c, variants, tally);
            }
            // fast's register paths (fast.registers: gray f32 3x3;
            // fast.walk-u8: u8 3x3 with integer taps on 1, 3 and 4
            // channels, fast.strips where the seed keeps the alpha):
            // blocks inside the image, at its sides, top and bottom, the
            // last cut short; f32 in blocks of 4 rows and of 8, u8 in bands
            // of 8 rows (the walk of whole bands alone) and of 20 (the ring
            // of 16 rows goes round), the last row then in the tail walk.
            // The u8 rows are 1700 to 1800 bytes: 4 bands across, the last
            // vector partly past the row.
            for (const int rows : {4, 8}) {
                const Pick registers = pick_of("fast.registers", {{"block_rows", rows}});
                const Pick walk = pick_of("fast.walk-u8", {{"band_rows", rows == 4 ? 8 : 20},
                                                           {"tail_rows", rows == 4 ? 0 : 1}});
                Case c{300, 21, 3, 3, 1, border, Depth::f32, Depth::f32, ++seed};
                c.centred_anchor = true;
                run_case(c, {registers}, true, tally);
                for (const auto& [channels, width] : {std::pair{1, 1700}, {3, 600}, {4, 450}}) {
                    c = {width, 21, 3, 3, channels, border, Depth::u8, Depth::u8, ++seed};
                    c.centred_anchor = true;
                    c.whole_border_value = true;
                    c.integer_taps = true;
                    c.plain_finish = true;
                    run_case(c, {walk, pick_of("fast.strips")}, true, tally);
                }
            }
            // fast.strips on u8: several bands across (the last part full)
            // and down (the last cut short), in bands of 5 rows; the same
            // with integer taps (its DP4A path) at every side.
            {
                const Tuning bands_of_5{{"band_rows", 5}};
                const std::vector<Pick> strips{pick_of("fast.strips", bands_of_5)};
                Case c{1000, 23, 3, 3, 3, border, Depth::u8, Depth::u8, ++seed};
                c.centred_anchor = true;
                c.whole_border_value = true;
                run_case(c, strips, true, tally);
                for (int side : {3, 5, 7}) {
                    c = {300,    13,        side,      side,  side == 5 ? 4 : 3,
                         border, Depth::u8, Depth::u8, ++seed};
                    c.centred_anchor = true;
                    c.whole_border_value = true;
                    c.integer_taps = true;
                    c.plain_finish = side != 5;
                    run_case(c, strips, true, tally);
                }
                // The head of rising bands (StripHead) above them: heights
                // 1, 2, 3, then bands of 5; and heights 3 to 9, taller than
                // the bands below, as the rule's are.
                struct Head {
                    int low, high, height;
                };
                for (const Head head : {Head{1, 3, 23}, Head{3, 9, 60}}) {
                    Tuning tuning = bands_of_5;
                    tuning.set("head_low", head.low);
                    tuning.set("head_high", head.high);
                    tuning.set("head_group", 1);
                    c = {1000, head.height, 3, 3, 3, border, Depth::u8, Depth::u8, ++seed};
                    c.centred_anchor = true;
                    c.whole_border_value = true;
                    c.integer_taps = true;
                    run_case(c, {pick_of("fast.strips", tuning)}, true, tally);
                }
            }
            // fast-separable.mma with u8 outputs (through its output tile):
            // tiles inside the image across and at its sides, staged rows
            // past the top and bottom, a kept alpha, and one block walking
            // every tile, so that its shared buffers are reused from tile to
            // tile.
            {
                const std::vector<Pick> separable{
                    pick_of("fast-separable.mma", {{"max_blocks", 1}})};
                for (int channels : {3, 4}) {
                    Case c{150, 70, 9, 9, channels, border, Depth::u8, Depth::u8, ++seed};
                    c.centred_anchor = true;
                    c.rank1 = true;
                    c.whole_border_value = true;
                    run_case(c, separable, true, tally);
                }
            }
            // fast.mma, one block walking every (tile, channel) item so that
            // its shared memory is reused: RGBA u8 (alpha kept or filtered,
            // as the seed says) and gray f32, on tiles cut short at the
            // right and bottom.
            {
                const std::vector<Pick> mma{pick_of("fast.mma", {{"max_blocks", 1}})};
                Case c{90, 70, 13, 9, 4, border, Depth::u8, Depth::u8, ++seed};
                run_case(c, mma, true, tally);
                c = {70, 65, 31, 31, 1, border, Depth::f32, Depth::f32, ++seed};
                run_case(c, mma, true, tally);
            }
            // One block of fast.tiles walks all of an image's tiles, so that
            // its shared-memory buffers are reused (both barrier parities,
            // the fill's writes before the next copies); u8 with a whole
            // constant border value fills the border in shared memory.
            std::vector<Pick> tiles{pick_of("fast.tiles", {{"max_blocks", 1}})};
            auto run_centred = [&](Case c, bool whole_border_value = false) {
                c.centred_anchor = true;
                c.whole_border_value = whole_border_value;
                run_case(c, tiles, true, tally);
            };
            run_centred({300, 40, 3, 3, 3, border, Depth::u8, Depth::u8, ++seed}, true);
            run_centred({300, 70, 5, 5, 1, border, Depth::f32, Depth::f32, ++seed});
            // The tile path's rolled filters (a loop over filter rows), on
            // tiles cut short at the right and bottom: f32 gray in steps of
            // 2 rows and a last step of 1, RGB u8 a row a step.
            run_centred({300, 40, 15, 15, 1, border, Depth::f32, Depth::f32, ++seed});
            run_centred({200, 23, 11, 11, 3, border, Depth::u8, Depth::u8, ++seed}, true);
            // Three blocks sharing the tile counter (its last block resets
            // it for the next case): RGB f32 13x13, steps of 3 filter rows
            // and a last step of 1; gray u8 11x11 whose fractional constant
            // border sends edge tiles through the bordered sums.
            tiles = {pick_of("fast.tiles", {{"max_blocks", 3}})};
            run_centred({300, 40, 13, 13, 3, border, Depth::f32, Depth::f32, ++seed});
            run_centred({600, 30, 11, 11, 1, border, Depth::u8, Depth::u8, ++seed});
        }
    }
    report(tally);
}

}  // namespace cudaconv::test

namespace cudaconv::test {

// Every variant copies the image's rows straight to and from the device
// (cudaMemcpy2DAsync from ordinary memory): an ROI of a larger image, whose
// rows lie further apart than they are wide and do not start at the buffer,
// gives the same output as the whole image, and nothing outside the output
// ROI is written.
TEST_CASE("CUDA variants read and write ROIs of larger images", "[gpu]") {
    if (skip_without_device()) return;
    const cv::Mat src = random_image(203, 67, CV_8UC3, 11);
    ConvParams params;
    params.filter = random_filter(5, 3, 12);
    params.anchor_x = 2;
    params.anchor_y = 1;
    params.scale = 0.2;
    auto all_equal = [](const cv::Mat& m, double v) {
        return cv::countNonZero(m.clone().reshape(1) != v) == 0;
    };
    int ran = 0;
    for (Backend* backend : cuda_backends()) {
        cv::Mat expected(src.size(), src.type(), cv::Scalar::all(0));
        const Job whole{const_view(src), mutable_view(expected), params};
        if (!backend->can_run(whole).ok) continue;
        backend->run(whole, {});

        cv::Mat wide_src(src.rows + 4, src.cols + 9, src.type(), cv::Scalar::all(77));
        const cv::Mat roi_src = wide_src(cv::Rect(5, 2, src.cols, src.rows));
        src.copyTo(roi_src);
        cv::Mat wide_dst(src.rows + 3, src.cols + 7, src.type(), cv::Scalar::all(99));
        cv::Mat roi_dst = wide_dst(cv::Rect(3, 1, src.cols, src.rows));
        backend->run(Job{const_view(roi_src), mutable_view(roi_dst), params}, {});
        INFO(backend->name());
        CHECK(cv::norm(roi_dst, expected, cv::NORM_INF) == 0.0);
        CHECK(all_equal(wide_dst.row(0), 99));
        CHECK(all_equal(wide_dst.col(2), 99));
        CHECK(all_equal(wide_dst.col(3 + src.cols), 99));
        CHECK(all_equal(wide_dst.row(1 + src.rows), 99));
        ++ran;
    }
    CHECK(ran > 0);
}

}  // namespace cudaconv::test

namespace cudaconv::test {
namespace {

// A job on `src` under `params`, into an image of its output size and
// `out_depth`.
struct OwnedJob {
    cv::Mat dst;
    Job job;
    OwnedJob(const cv::Mat& src, const ConvParams& params, Depth out_depth) {
        const Size2D size = output_size(src.cols, src.rows, params);
        dst = cv::Mat(static_cast<int>(size.height), static_cast<int>(size.width),
                      cv_type(out_depth, src.channels()), cv::Scalar::all(0));
        job = Job{const_view(src), mutable_view(dst), params};
    }
};

// The named path `variant` ran for the job (RunTimings::path), once it said
// it can run it.
std::string path_run(std::string_view variant, const cv::Mat& src, const ConvParams& params,
                     Depth out_depth, const Tuning& tuning = {}) {
    Backend* backend = variant_named(variant);
    const OwnedJob owned(src, params, out_depth);
    const Support support = backend->can_run(owned.job);
    INFO(variant << ": " << support.reason);
    REQUIRE(support.ok);
    RunOptions options;
    options.tuning = tuning;
    return backend->run(owned.job, options).path;
}

}  // namespace

// Where the tuning values that forced a path are gone, fast and
// fast-separable say which named path ran (RunTimings::path): the one their
// measured rules pick (kernels/fast/fast_paths.cu, kernels/fast_separable/fast_separable.cu),
// and a named path runs itself. The outputs are the other tests'.
TEST_CASE("fast and fast-separable report the named path they ran", "[gpu]") {
    if (skip_without_device() || skip_before_hopper()) return;
    const Filter edge{3, 3, {-1, -1, -1, -1, 8, -1, -1, -1, -1}};
    const cv::Mat gray_f32 = random_image(200, 100, CV_32FC1, 1);
    const cv::Mat rgb_u8 = random_image(200, 100, CV_8UC3, 2);
    ConvParams f32_3x3 = centred_params(random_filter(3, 3, 3));
    // Gray f32 3x3: the registers; any other 3x3 to 7x7 job the strips take,
    // u8 3x3 with integer taps summed as they are excepted: the walk.
    CHECK(path_run("fast", gray_f32, f32_3x3, Depth::f32) == "fast.registers");
    CHECK(path_run("fast", gray_f32, f32_3x3, Depth::u8) == "fast.registers");
    CHECK(path_run("fast", gray_f32, centred_params(random_filter(5, 5, 4)), Depth::f32) ==
          "fast.strips");
    CHECK(path_run("fast", rgb_u8, centred_params(edge), Depth::u8) == "fast.walk-u8");
    ConvParams scaled = centred_params(edge);
    scaled.scale = 0.5;
    CHECK(path_run("fast", rgb_u8, scaled, Depth::u8) == "fast.strips");
    CHECK(path_run("fast", rgb_u8, centred_params(edge), Depth::f32) == "fast.strips");
    CHECK(path_run("fast", rgb_u8, centred_params(random_filter(7, 7, 5)), Depth::u8) ==
          "fast.strips");
    // RGBA u8 takes the walk up to 24 MiB a frame, the strips past it.
    ConvParams rgba_edge = centred_params(edge);
    rgba_edge.alpha = AlphaMode::filter;
    CHECK(path_run("fast", random_image(3072, 2048, CV_8UC4, 6), rgba_edge, Depth::u8) ==
          "fast.walk-u8");
    CHECK(path_run("fast", random_image(3072, 2049, CV_8UC4, 7), rgba_edge, Depth::u8) ==
          "fast.strips");
    // 9x9 to 15x15: the tiles; colour u8 at 15x15 from 4 megapixels the
    // tensor cores.
    CHECK(path_run("fast", rgb_u8, centred_params(random_filter(9, 9, 8)), Depth::u8) ==
          "fast.tiles");
    CHECK(path_run("fast", gray_f32, centred_params(random_filter(15, 15, 9)), Depth::f32) ==
          "fast.tiles");
    const ConvParams rgb_15 = centred_params(random_filter(15, 15, 10));
    CHECK(path_run("fast", random_image(2000, 2000, CV_8UC3, 11), rgb_15, Depth::u8) == "fast.mma");
    CHECK(path_run("fast", random_image(2000, 1999, CV_8UC3, 12), rgb_15, Depth::u8) ==
          "fast.tiles");
    // What the CUDA-core paths cannot run: the tensor cores.
    CHECK(path_run("fast", gray_f32, centred_params(random_filter(17, 17, 13)), Depth::f32) ==
          "fast.mma");
    CHECK(path_run("fast", gray_f32, centred_params(random_filter(4, 7, 14)), Depth::f32) ==
          "fast.mma");
    ConvParams valid = f32_3x3;
    valid.border = BorderMode::valid;
    CHECK(path_run("fast", gray_f32, valid, Depth::f32) == "fast.mma");
    CHECK(path_run("fast", random_image(200, 100, CV_16UC1, 15), f32_3x3, Depth::u16) ==
          "fast.mma");
    // A named path runs itself, on jobs fast would give another path.
    CHECK(path_run("fast.strips", gray_f32, f32_3x3, Depth::f32) == "fast.strips");
    CHECK(path_run("fast.tiles", gray_f32, f32_3x3, Depth::f32) == "fast.tiles");
    CHECK(path_run("fast.mma", gray_f32, f32_3x3, Depth::f32) == "fast.mma");
    CHECK(path_run("fast.tiles", rgb_u8, centred_params(edge), Depth::u8) == "fast.tiles");
    // The composite passes its paths' tuning values on; a value out of a
    // path's own rule (blocks of 4 or 8 rows) fails the run.
    CHECK(path_run("fast", gray_f32, f32_3x3, Depth::f32, {{"block_rows", 8}}) == "fast.registers");
    CHECK(path_run("fast", rgb_u8, centred_params(edge), Depth::u8,
                   {{"band_rows", 20}, {"tail_rows", 0}}) == "fast.walk-u8");
    {
        const OwnedJob owned(gray_f32, f32_3x3, Depth::f32);
        RunOptions options;
        options.tuning.set("block_rows", 5);
        CHECK_THROWS(variant_named("fast.registers")->run(owned.job, options));
    }

    // fast-separable: the tensor cores for rank-1 filters on u8 (a constant
    // border a whole u8), the CUDA-core path for the rest.
    const ConvParams gauss = centred_params(make_named_filter("gaussian:9").value());
    CHECK(path_run("fast-separable", rgb_u8, gauss, Depth::u8) == "fast-separable.mma");
    CHECK(path_run("fast-separable", gray_f32, gauss, Depth::f32) == "fast-separable.strips");
    ConvParams fractional = gauss;
    fractional.border = BorderMode::constant;
    fractional.border_value = 17.5;
    CHECK(path_run("fast-separable", rgb_u8, fractional, Depth::u8) == "fast-separable.strips");
    fractional.border_value = 17.0;
    CHECK(path_run("fast-separable", rgb_u8, fractional, Depth::u8) == "fast-separable.mma");
    CHECK(path_run("fast-separable.strips", rgb_u8, gauss, Depth::u8) == "fast-separable.strips");
    CHECK(path_run("fast-separable.strips", rgb_u8, gauss, Depth::u8, {{"strip_rows", 32}}) ==
          "fast-separable.strips");
    CHECK(path_run("fast-separable", rgb_u8, gauss, Depth::u8, {{"max_blocks", 2}}) ==
          "fast-separable.mma");

    // fast runs a rank-1 filter on fast.separable (fast-separable's kernels)
    // where they are measured ahead of its others (separable_ahead_of_fast):
    // RGB u8 from 5x5, other u8 from 7x7, gray f32 from 9x9; below, and
    // where fast-separable refuses (not square), on the others.
    const auto gaussian = [](int side) {
        return centred_params(make_named_filter("gaussian:" + std::to_string(side)).value());
    };
    CHECK(path_run("fast", rgb_u8, gauss, Depth::u8) == "fast.separable");
    CHECK(path_run("fast", rgb_u8, gaussian(5), Depth::u8) == "fast.separable");
    CHECK(path_run("fast", rgb_u8, gaussian(3), Depth::u8) == "fast.strips");
    const cv::Mat gray_u8 = random_image(200, 100, CV_8UC1, 16);
    CHECK(path_run("fast", gray_u8, gaussian(7), Depth::u8) == "fast.separable");
    CHECK(path_run("fast", gray_u8, gaussian(5), Depth::u8) == "fast.strips");
    CHECK(path_run("fast", gray_f32, gauss, Depth::f32) == "fast.separable");
    CHECK(path_run("fast", gray_f32, gaussian(7), Depth::f32) == "fast.strips");
    Filter row = make_named_filter("gaussian:9").value();  // its first row, 9x1
    row.height = 1;
    row.taps.resize(9);
    CHECK(path_run("fast", rgb_u8, centred_params(row), Depth::u8) == "fast.mma");
    // Its paths by name stay its own.
    CHECK(path_run("fast.mma", rgb_u8, gauss, Depth::u8) == "fast.mma");
    CHECK(path_run("fast.separable", rgb_u8, gaussian(3), Depth::u8) == "fast.separable");
}

}  // namespace cudaconv::test
