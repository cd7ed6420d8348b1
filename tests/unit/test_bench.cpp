// `cudaconv bench`'s parts without the binary: option lists, random
// filters, verification, tolerances, and run_bench itself with
// cpu-ref and deliberately broken variants. No GPU needed.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include <opencv2/core.hpp>

#include "bench/cases.hpp"
#include "bench/random_data.hpp"
#include "bench/report.hpp"
#include "bench/reference.hpp"
#include "bench/runner.hpp"
#include "bench/verify.hpp"
#include "base/errors.hpp"
#include "variants/registry.hpp"
#include "core/tolerance.hpp"
#include "filters/spec.hpp"
#include "io/image_io.hpp"
#include "kernels/runtime/copy_bandwidth.hpp"
#include "kernels/runtime/device_info.hpp"
#include "core/fft_sizes.hpp"

namespace cudaconv {
namespace {

// A variant that runs cpu-ref, then spoils one sample (or throws): what
// bench must catch before it shows a time.
class BrokenBackend final : public Backend {
public:
    enum class Fault { none, one_sample, throws };
    explicit BrokenBackend(Fault fault) : fault_(fault) {}
    std::string_view name() const override { return "broken"; }
    std::string_view summary() const override { return "cpu-ref, then a fault"; }
    bool uses_cuda() const override { return false; }
    std::optional<int> auto_rank(const Job&) const override { return std::nullopt; }
    Support can_run(const Job&) const override { return Support::yes(); }
    RunTimings run(const Job& job, const RunOptions& options) override {
        if (fault_ == Fault::throws) throw std::runtime_error("out of luck");
        RunTimings t = find_backend(kOracleName)->run(job, options);
        if (fault_ == Fault::one_sample) {
            // Sample 1 of row 2: +8 levels (u8) or +0.5 (f32, outputs near 0.5).
            std::byte* p = job.dst.row(2) + depth_bytes(job.dst.depth);
            if (job.dst.depth == Depth::u8) {
                std::uint8_t v;
                std::memcpy(&v, p, 1);
                v = static_cast<std::uint8_t>(v < 128 ? v + 8 : v - 8);
                std::memcpy(p, &v, 1);
            } else {
                float v;
                std::memcpy(&v, p, 4);
                v += 0.5f;
                std::memcpy(p, &v, 4);
            }
        }
        return t;
    }

private:
    Fault fault_;
};

}  // namespace

TEST_CASE("bench sizes: WxH is RGB, WxHxC names the channels", "[bench]") {
    CHECK(parse_bench_size("780x585") == BenchSize{780, 585, 3});
    CHECK(parse_bench_size("4000x3000x1") == BenchSize{4000, 3000, 1});
    CHECK(parse_bench_size("7X5x4") == BenchSize{7, 5, 4});
    CHECK(parse_bench_size("4000x3000x1").label() == "4000x3000x1");
    for (const char* bad : {"", "780", "780x", "x585", "0x5", "5x0", "-5x5", "5x5x2", "5x5x0",
                            "5x5x3x1", "5.5x5", "5x5 ", "99999x5", "axb"}) {
        CAPTURE(bad);
        CHECK_THROWS_AS(parse_bench_size(bad), UsageError);
    }
    const auto sizes = parse_bench_sizes({kDefaultBenchSizes});
    REQUIRE(sizes.size() == 4);
    CHECK(sizes[0] == BenchSize{780, 585, 3});
    CHECK(sizes[3] == BenchSize{4000, 3000, 1});
    // Repeated options add up; duplicates go.
    CHECK(parse_bench_sizes({"8x8,9x9", "8x8x3", " 10x10x1 "}).size() == 3);
}

TEST_CASE("bench filter lists keep an inline filter's commas", "[bench]") {
    CHECK(split_filter_list("edge") == std::vector<std::string>{"edge"});
    CHECK(split_filter_list("edge,3x3:1,2,1,2,4,2,1,2,1,box:3") ==
          std::vector<std::string>{"edge", "3x3:1,2,1,2,4,2,1,2,1", "box:3"});
    CHECK(split_filter_list("2x1:-1, 1.5e0 ,gaussian:5:1.2") ==
          std::vector<std::string>{"2x1:-1,1.5e0", "gaussian:5:1.2"});
    CHECK_THROWS_AS(split_filter_list("edge,,box:3"), UsageError);
    CHECK_THROWS_AS(split_filter_list("edge,"), UsageError);

    const auto filters = parse_bench_filters({kDefaultBenchFilters});
    REQUIRE(filters.size() == 5);
    CHECK(filters[0].label == "edge");
    CHECK(filters[1].width == 5);
    CHECK(filters[4].label == "random:31");
    CHECK(filters[4].width == 31);
    CHECK(filters[4].height == 31);
    // An inline filter is parsed as -f parses it.
    const auto inline_filters = parse_bench_filters({"3x3:1,2,1,2,4,2,1,2,1"});
    REQUIRE(inline_filters.size() == 1);
    CHECK(inline_filters[0].taps == parse_filter_spec("3x3:1,2,1,2,4,2,1,2,1").taps);
    CHECK_THROWS_AS(parse_bench_filters({"no-such-filter"}), UsageError);
}

TEST_CASE("random:N is dense, asymmetric, sums to 1 and never changes", "[bench]") {
    const Filter f = make_bench_filter("random:7");
    CHECK(f.label == "random:7");
    REQUIRE(f.width == 7);
    REQUIRE(f.height == 7);
    double sum = 0.0;
    for (const double t : f.taps) {
        CHECK(t > 0.0);
        sum += t;
    }
    CHECK(sum == Approx(1.0).epsilon(1e-12));
    CHECK(f.taps != f.rotated_180().taps);
    CHECK(make_bench_filter("random:7").taps == f.taps);  // a fixed seed
    CHECK(make_bench_filter("random:5").taps == make_bench_filter("random:5x5").taps);

    const Filter wide = make_bench_filter("random:9x2");
    CHECK(wide.width == 9);
    CHECK(wide.height == 2);
    CHECK(wide.label == "random:9x2");
    for (const char* bad : {"random:", "random:0", "random:x", "random:3x", "random:3x3x3",
                            "random:-3", "random:2000"}) {
        CAPTURE(bad);
        CHECK_THROWS_AS(make_bench_filter(bad), UsageError);
    }
}

TEST_CASE("bench depths and variants", "[bench]") {
    CHECK(parse_bench_depths({kDefaultBenchDepths}) == std::vector<Depth>{Depth::u8, Depth::f32});
    CHECK(parse_bench_depths({"u16", "u8,u16"}) == std::vector<Depth>{Depth::u16, Depth::u8});
    CHECK_THROWS_AS(parse_bench_depths({"same"}), UsageError);
    CHECK_THROWS_AS(parse_bench_depths({"u8,"}), UsageError);

    // "all": every variant of its own, in registry order, without the
    // composites' named paths; NAME.* those paths.
    const auto all = select_bench_variants("all");
    std::vector<Backend*> own;
    for (const auto& b : all_backends()) {
        if (b->parent().empty()) own.push_back(b.get());
    }
    CHECK(all == own);
    CHECK(std::find(all.begin(), all.end(), find_backend("fast")) != all.end());
    CHECK(std::find(all.begin(), all.end(), find_backend("fast.strips")) == all.end());
    std::vector<std::string> paths;
    for (const Backend* b : select_bench_variants("fast.*")) paths.emplace_back(b->name());
    CHECK(paths == std::vector<std::string>{"fast.registers", "fast.walk-u8", "fast.strips",
                                            "fast.tiles", "fast.mma", "fast.separable"});
    CHECK(select_bench_variants("fast-separable.*").size() == 2);
    CHECK_THROWS_AS(select_bench_variants("cpu-ref.*"), UsageError);
    const auto two = select_bench_variants("cpu-ref, cpu-ref");
    REQUIRE(two.size() == 1);
    CHECK(two[0]->name() == "cpu-ref");
    CHECK_THROWS_AS(select_bench_variants("cpu-ref,warp-speed"), UsageError);
    CHECK_THROWS_AS(select_bench_variants("auto"), UsageError);
}

TEST_CASE("verification passes a correct output and marks a corrupted one", "[bench]") {
    const Depth depth = GENERATE(Depth::u8, Depth::f32);
    CAPTURE(depth_name(depth));
    const cv::Mat src = random_bench_image({23, 11, 3}, depth);
    cv::Mat expected(src.size(), src.type()), actual(src.size(), src.type());
    const ConvParams params = centred_params(make_bench_filter("random:5"));
    Backend& oracle = *find_backend(kOracleName);
    oracle.run({view_of(src), view_of(expected), params}, {});
    oracle.run({view_of(src), view_of(actual), params}, {});
    const Job job{view_of(src), view_of(actual), params};
    const Tolerance tolerance = find_backend("naive")->tolerance(job);

    Verdict v =
        verify_output(view_of(static_cast<const cv::Mat&>(expected)), as_const(job.dst), tolerance);
    CHECK(v.ok);
    CHECK(v.failures == 0);
    CHECK(v.samples == 23 * 11 * 3);

    // Just within the bound still passes: one level, or the float bound.
    if (depth == Depth::u8) {
        actual.at<cv::Vec3b>(4, 6)[1] = static_cast<std::uint8_t>(
            expected.at<cv::Vec3b>(4, 6)[1] + (expected.at<cv::Vec3b>(4, 6)[1] < 255 ? 1 : -1));
    } else {
        actual.at<cv::Vec3f>(4, 6)[1] += static_cast<float>(0.5 * v.tolerance);
    }
    CHECK(
        verify_output(view_of(static_cast<const cv::Mat&>(expected)), as_const(job.dst), tolerance)
            .ok);

    // Beyond it: WRONG, and the worst sample is named.
    if (depth == Depth::u8) {
        auto& s = actual.at<cv::Vec3b>(7, 9)[2];
        s = static_cast<std::uint8_t>(s < 128 ? s + 3 : s - 3);
    } else {
        actual.at<cv::Vec3f>(7, 9)[2] += 1e-3f;
    }
    v = verify_output(view_of(static_cast<const cv::Mat&>(expected)), as_const(job.dst), tolerance);
    CHECK_FALSE(v.ok);
    CHECK(v.failures == 1);
    CHECK(v.worst.x == 9);
    CHECK(v.worst.y == 7);
    CHECK(v.worst.channel == 2);
    CHECK_THAT(v.describe(),
               Catch::Contains("1 of 759 samples") && Catch::Contains("(x=9, y=7, c=2)"));

    // NaN is never within tolerance.
    if (depth == Depth::f32) {
        actual.at<cv::Vec3f>(7, 9)[2] = std::nanf("");
        v = verify_output(view_of(static_cast<const cv::Mat&>(expected)), as_const(job.dst),
                          tolerance);
        CHECK_FALSE(v.ok);
        CHECK(std::isinf(v.worst.error));
    }

    // Images that do not match in shape cannot be compared.
    const cv::Mat small(5, 5, src.type(), cv::Scalar::all(0));
    v = verify_output(view_of(small), as_const(job.dst), tolerance);
    CHECK_FALSE(v.ok);
    CHECK_THAT(v.describe(), Catch::Contains("cannot compare"));
}

TEST_CASE("tolerances: fft's documented bound, float32 summation for the others", "[bench]") {
    const cv::Mat src = random_bench_image({40, 30, 1}, Depth::f32);
    cv::Mat dst(src.size(), src.type());
    const Filter filter = make_bench_filter("random:15");
    const Job job{view_of(src), view_of(dst), centred_params(filter)};

    const Tolerance direct = find_backend("naive")->tolerance(job);
    CHECK(direct.integer_levels == 1.0);
    CHECK(direct.float_relative == 1e-5);
    // n 2^-24 sum|taps| max|input|: taps sum to 1, inputs below 1.
    CHECK(direct.float_absolute > 0.0);
    CHECK(direct.float_absolute <= 225 * std::ldexp(1.0, -24) * (1.0 + 1e-9));

    // The other variants' is the same bound (a stand-in of a build without
    // CUDA too: it runs nothing).
    for (const char* name : {"cpu-ref", "cpu", "fast", "fast.strips", "fast-separable"}) {
        const Tolerance t = find_backend(name)->tolerance(job);
        INFO(name);
        CHECK(t.integer_levels == direct.integer_levels);
        CHECK(t.float_relative == direct.float_relative);
        CHECK(t.float_absolute == direct.float_absolute);
    }
    // The border value counts where a constant border reads it.
    Job constant = job;
    constant.params.border_value = 1e6;
    CHECK(find_backend("naive")->tolerance(constant).float_absolute == direct.float_absolute);
    constant.params.border = BorderMode::constant;
    CHECK(find_backend("naive")->tolerance(constant).float_absolute > 1e5 * direct.float_absolute);

    // fft's own bound, where this build has fft (not its stand-in).
    const Backend& fft_variant = *find_backend("fft");
    if (fft_variant.summary().rfind("not in this build", 0) != 0) {
        const Tolerance fft = fft_variant.tolerance(job);
        CHECK(fft.float_absolute == fft_error_bound(job));
        CHECK(fft.integer_levels == 1.0 + std::floor(fft_error_bound(job)));
    }

    // Against a reference that is not the oracle, both errors count.
    const Tolerance both = against_reference(direct, direct, false);
    CHECK(both.integer_levels == 2.0);
    CHECK(both.float_absolute == Approx(2 * direct.float_absolute));
    Tolerance other;
    other.float_absolute = 7.0;
    CHECK(against_reference(direct, other, true).float_absolute == direct.float_absolute);
}

TEST_CASE("the oracle is the reference while it takes seconds", "[bench]") {
    const cv::Mat src = random_bench_image({64, 48, 3}, Depth::u8);
    cv::Mat dst(src.size(), src.type());
    Job job{view_of(src), view_of(dst), centred_params(make_bench_filter("edge"))};
    CHECK(tap_samples(job) == 9.0 * 64 * 48 * 3);
    const ReferenceChoice small = choose_reference(job);
    CHECK(small.backend->name() == kOracleName);
    CHECK(small.exact);

    // Past the limit: the cpu variant's direct path where it is registered,
    // else cpu-ref.
    job.dst.width = 40000;
    job.dst.height = 40000;
    const ReferenceChoice large = choose_reference(job);
    REQUIRE(large.backend != nullptr);
    if (find_backend(kTrustedCpuName)) {
        CHECK(large.backend->name() == kTrustedCpuName);
        CHECK_FALSE(large.exact);
    } else {
        CHECK(large.backend->name() == kOracleName);
    }
}

TEST_CASE("run_bench times, verifies and refuses, row by row", "[bench]") {
    BrokenBackend wrong(BrokenBackend::Fault::one_sample);
    BrokenBackend throws(BrokenBackend::Fault::throws);
    BrokenBackend fine(BrokenBackend::Fault::none);
    BenchPlan plan;
    plan.sizes = {{17, 9, 3}, {12, 7, 1}};
    plan.filters = {make_bench_filter("edge"), make_bench_filter("random:3")};
    plan.depths = {Depth::u8, Depth::f32};
    plan.variants = {find_backend(kOracleName), &fine, &wrong, &throws};
    plan.warmup = 1;
    plan.repeat = 3;

    const BenchReport report = run_bench(plan);
    REQUIRE(report.rows.size() == 2 * 2 * 2 * 4);
    for (const BenchRow& row : report.rows) {
        CAPTURE(row.variant, row.size.label(), row.filter, depth_name(row.depth), row.reason);
        if (row.variant == "cpu-ref") {
            CHECK(row.status == RowStatus::ok);
            CHECK(row.reference == "cpu-ref");
            CHECK(row.time.runs == 3);
            CHECK(row.time.median_ms > 0.0);
            CHECK(row.gb_per_s > 0.0);
            CHECK_FALSE(row.copy_share);  // CPU rows have no copy share
        }
        if (row.variant == "broken" && row.status == RowStatus::wrong) {
            REQUIRE(row.verdict);
            CHECK(row.verdict->worst.x * row.size.channels + row.verdict->worst.channel == 1);
            CHECK(row.verdict->worst.y == 2);
        }
    }
    const auto count = [&](RowStatus s) {
        return std::count_if(report.rows.begin(), report.rows.end(),
                             [&](const BenchRow& r) { return r.status == s; });
    };
    CHECK(count(RowStatus::ok) == 16);    // cpu-ref and the faultless one
    CHECK(count(RowStatus::wrong) == 8);  // one spoilt sample each time
    CHECK(count(RowStatus::error) == 8);  // the one that throws
    CHECK(report.any_failure());

    plan.variants = {find_backend(kOracleName)};
    plan.verify = false;
    const BenchReport unverified = run_bench(plan);
    CHECK_FALSE(unverified.any_failure());
    for (const BenchRow& row : unverified.rows) {
        CHECK(row.status == RowStatus::unverified);
        CHECK(row.reference.empty());
    }
}

TEST_CASE("run_bench refuses what leaves no output", "[bench]") {
    BenchPlan plan;
    plan.sizes = {{4, 4, 1}};
    plan.filters = {make_bench_filter("random:5")};
    plan.depths = {Depth::u8};
    plan.variants = {find_backend(kOracleName)};
    plan.border = BorderMode::valid;
    plan.warmup = 0;
    plan.repeat = 1;
    const BenchReport report = run_bench(plan);
    REQUIRE(report.rows.size() == 1);
    CHECK(report.rows[0].status == RowStatus::refused);
    CHECK_THAT(report.rows[0].reason, Catch::Contains("valid"));
    CHECK_FALSE(report.any_failure());
}

// On a GPU: every CUDA variant, its launches rotated over several copies,
// still gives the right output (whichever copy the last launch wrote).
TEST_CASE("rotated CUDA runs stay correct, the copy bandwidth is measured", "[bench][gpu]") {
    if (probe_devices().devices.empty()) {
        std::cout << "SKIPPED: no CUDA device (" << probe_devices().problem << ")\n";
        return;
    }
    const CopyBandwidth copy = measure_copy_bandwidth(std::size_t{64} << 20, 1, 3);
    CHECK(copy.gb_per_s > 10.0);

    const cv::Mat src = random_bench_image({61, 37, 3}, Depth::u8);
    cv::Mat expected(src.size(), src.type()), actual(src.size(), src.type());
    const ConvParams params = centred_params(make_bench_filter("random:5"));
    find_backend(kOracleName)->run({view_of(src), view_of(expected), params}, {});
    const std::size_t pair = 2 * src.total() * src.elemSize();
    for (const auto& variant : all_backends()) {
        const Job job{view_of(src), view_of(actual), params};
        if (!variant->uses_cuda() || !variant->can_run(job).ok) continue;
        // 3 copies over 4 launches (the last writes copy 0), then 5 over 3.
        for (const auto& [copies, warmup, repeat] :
             {std::tuple{3, 1, 3}, std::tuple{5, 0, 3}, std::tuple{2, 2, 1}}) {
            CAPTURE(variant->name(), copies, warmup, repeat);
            std::memset(actual.data, 0xFF, actual.total() * actual.elemSize());
            const RunTimings t =
                variant->run(job, {warmup, repeat, static_cast<std::size_t>(copies) * pair});
            CHECK(t.filter_ms.size() == static_cast<std::size_t>(repeat));
            const Verdict v = verify_output(view_of(static_cast<const cv::Mat&>(expected)),
                                            as_const(job.dst), variant->tolerance(job));
            INFO(v.describe());
            CHECK(v.ok);
        }
    }
}

// The header says how CUDA rows were timed where some were: a report as a
// device would leave it, printed to memory.
TEST_CASE("the bench header says how CUDA rows were timed, where a device timed them", "[bench]") {
    const auto header = [](const BenchContext& context) {
        BenchReport report;
        report.context = context;
        char* text = nullptr;
        std::size_t size = 0;
        std::FILE* stream = open_memstream(&text, &size);
        REQUIRE(stream != nullptr);
        print_bench_tables(stream, report);
        std::fclose(stream);
        std::string printed(text, size);
        std::free(text);
        return printed;
    };
    BenchContext context;
    context.cuda_wanted = true;
    context.device_name = "NVIDIA H100 80GB HBM3";
    context.device_timing = true;
    CHECK_THAT(
        header(context),
        Catch::Contains("CUDA times the device's alone (launches queued behind a held stream)"));
    context.device_timing = false;
    CHECK_THAT(header(context),
               Catch::Contains("CUDA times include the host's launch latency (--timing launch)"));
    context.device_name.clear();  // no device: no CUDA row was timed
    CHECK_THAT(header(context), !Catch::Contains("CUDA times"));
    context.cuda_wanted = false;
    context.device_name = "NVIDIA H100 80GB HBM3";
    CHECK_THAT(header(context), !Catch::Contains("CUDA times"));
}

}  // namespace cudaconv
