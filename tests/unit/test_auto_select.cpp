// `auto` is a pure function: these fakes stand in for variants and devices.
// Each fake has the rank the variant of its name gives itself
// (Backend::auto_rank): the constants and rules of core/auto_select.hpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/auto_select.hpp"
#include "filters/spec.hpp"
#include "variants/registry.hpp"

namespace cudaconv {
namespace {

// A variant's rank for a job; none for a named path, which auto never picks.
using RankRule = std::function<std::optional<int>(const Job&)>;

class FakeBackend final : public Backend {
public:
    FakeBackend(std::string name, bool cuda, Support support, RankRule rank)
        : name_(std::move(name)),
          cuda_(cuda),
          support_(std::move(support)),
          rank_(std::move(rank)) {}
    FakeBackend(std::string name, bool cuda, Support support, int rank)
        : FakeBackend(std::move(name), cuda, std::move(support),
                      [rank](const Job&) { return std::optional<int>(rank); }) {}
    std::string_view name() const override { return name_; }
    std::string_view summary() const override { return "fake"; }
    bool uses_cuda() const override { return cuda_; }
    std::optional<int> auto_rank(const Job& job) const override { return rank_(job); }
    Support can_run(const Job&) const override { return support_; }
    RunTimings run(const Job&, const RunOptions&) override { return {}; }

private:
    std::string name_;
    bool cuda_;
    Support support_;
    RankRule rank_;
};

// The ranks of the variants that move up for some jobs.
const RankRule kFastSeparableRank = [](const Job& job) {
    return std::optional<int>(fast_separable_rank(job));
};
const RankRule kFftRank = [](const Job& job) { return std::optional<int>(fft_rank(job)); };
const RankRule kNamedPath = [](const Job&) { return std::optional<int>(); };

const DeviceContext kNoDevice{false, "no CUDA driver"};
const DeviceContext kDevice{true, ""};

}  // namespace

TEST_CASE("auto picks the CPU without a device and says why", "[auto]") {
    FakeBackend ref("cpu-ref", false, Support::yes(), kRankCpuRef);
    FakeBackend smem("smem", true, Support::yes(), kRankSmem);
    const AutoChoice choice = choose_variant(Job{}, {&ref, &smem}, kNoDevice);
    REQUIRE(choice.backend == &ref);
    CHECK_THAT(choice.reason, Catch::Contains("no CUDA device (no CUDA driver)"));
}

TEST_CASE("auto prefers a CUDA variant when a device is present", "[auto]") {
    FakeBackend ref("cpu-ref", false, Support::yes(), kRankCpuRef);
    FakeBackend naive("naive", true, Support::yes(), kRankNaive);
    FakeBackend smem("smem", true, Support::yes(), kRankSmem);
    const AutoChoice choice = choose_variant(Job{}, {&ref, &naive, &smem}, kDevice);
    REQUIRE(choice.backend == &smem);
    CHECK_THAT(choice.reason, Catch::Contains("CUDA"));
}

TEST_CASE("auto passes over refusing variants and reports their reasons", "[auto]") {
    FakeBackend ref("cpu-ref", false, Support::yes(), kRankCpuRef);
    FakeBackend separable("separable", true, Support::no("the filter is not rank 1"),
                          kRankSeparable);
    FakeBackend naive("naive", true, Support::yes(), kRankNaive);
    const AutoChoice choice = choose_variant(Job{}, {&ref, &separable, &naive}, kDevice);
    REQUIRE(choice.backend == &naive);
    CHECK_THAT(choice.reason, Catch::Contains("separable refused: the filter is not rank 1"));
}

TEST_CASE("auto falls back to the CPU when every CUDA variant refuses", "[auto]") {
    FakeBackend ref("cpu-ref", false, Support::yes(), kRankCpuRef);
    FakeBackend naive("naive", true, Support::no("image too large for the device"), kRankNaive);
    const AutoChoice choice = choose_variant(Job{}, {&ref, &naive}, kDevice);
    REQUIRE(choice.backend == &ref);
    CHECK_THAT(choice.reason, Catch::Contains("no CUDA variant can run this job"));
}

TEST_CASE("auto reports when nothing can run", "[auto]") {
    FakeBackend naive("naive", true, Support::no("too big"), kRankNaive);
    const AutoChoice choice = choose_variant(Job{}, {&naive}, kDevice);
    CHECK(choice.backend == nullptr);
    CHECK_THAT(choice.reason, Catch::Contains("naive refused: too big"));
}

// A job with no pixels, only what the ranks read: the filter, the input's
// depth and channels and the output's depth.
Job job_with(Filter filter, Depth depth, int channels = 1, Depth out_depth = Depth::u8) {
    Job job;
    job.params.filter = std::move(filter);
    job.src.depth = depth;
    job.src.channels = channels;
    job.dst.depth = out_depth;
    return job;
}

TEST_CASE("auto's measured order: rank 1 on gray f32 from 9x9, on u8 from 7x7 (RGB from 5x5), "
          "to fast-separable",
          "[auto]") {
    FakeBackend fast("fast", true, Support::yes(), kRankFast);
    FakeBackend fast_separable("fast-separable", true, Support::yes(), kFastSeparableRank);
    const auto box = [](int side) {
        return Filter{side, side,
                      std::vector<double>(static_cast<std::size_t>(side * side), 1.0 / side)};
    };
    const Filter edge = Filter{3, 3, {-1, -1, -1, -1, 8, -1, -1, -1, -1}};
    const std::vector<Backend*> both{&fast, &fast_separable};
    const auto chosen = [&](const Filter& f, Depth depth, int channels = 1) {
        return choose_variant(job_with(f, depth, channels), both, kDevice).backend;
    };
    CHECK(chosen(box(3), Depth::f32) == &fast);
    CHECK(chosen(box(5), Depth::f32) == &fast);
    CHECK(chosen(box(7), Depth::f32) == &fast);
    CHECK(chosen(box(9), Depth::f32) == &fast_separable);
    CHECK(chosen(box(15), Depth::f32) == &fast_separable);
    CHECK(chosen(box(5), Depth::u8) == &fast);
    CHECK(chosen(box(7), Depth::u8) == &fast_separable);
    CHECK(chosen(box(9), Depth::u8) == &fast_separable);
    CHECK(chosen(box(15), Depth::u8) == &fast_separable);
    // u16 is not measured: the list's order.
    CHECK(chosen(box(15), Depth::u16) == &fast);
    // Not rank 1: fast.
    CHECK(chosen(edge, Depth::f32) == &fast);
    // RGB u8 from 5x5, RGBA u8 as gray u8 (fast-separable's tensor-core path); RGB
    // f32 is not measured.
    CHECK(chosen(box(3), Depth::u8, 3) == &fast);
    CHECK(chosen(box(5), Depth::u8, 3) == &fast_separable);
    CHECK(chosen(box(5), Depth::u8, 4) == &fast);
    CHECK(chosen(box(7), Depth::u8, 4) == &fast_separable);
    CHECK(chosen(box(15), Depth::u8, 4) == &fast_separable);
    CHECK(chosen(box(15), Depth::f32, 3) == &fast);
    // A fractional constant border keeps u8 jobs off the tensor-core path,
    // and so on fast; a whole one does not.
    Job constant = job_with(box(15), Depth::u8, 3);
    constant.params.border = BorderMode::constant;
    constant.params.border_value = 17.5;
    CHECK(choose_variant(constant, both, kDevice).backend == &fast);
    constant.params.border_value = 17.0;
    CHECK(choose_variant(constant, both, kDevice).backend == &fast_separable);
}

TEST_CASE("auto's measured order: dense filters past 15x15 go to fft before the ladder", "[auto]") {
    FakeBackend fft("fft", true, Support::yes(), kFftRank);
    FakeBackend smem("smem", true, Support::yes(), kRankSmem);
    FakeBackend separable("separable", true, Support::yes(), kRankSeparable);
    const std::vector<Backend*> all{&smem, &separable, &fft};
    std::vector<double> dense(17 * 17);
    for (std::size_t i = 0; i < dense.size(); ++i) dense[i] = static_cast<double>(i % 7) - 3.0;
    CHECK(choose_variant(job_with(Filter{17, 17, dense}, Depth::u8), all, kDevice).backend == &fft);
    // A float output keeps SPEC's 1e-5: the direct variants, not fft.
    CHECK(choose_variant(job_with(Filter{17, 17, dense}, Depth::f32, 1, Depth::f32), all, kDevice)
              .backend == &separable);
    // Past 15 on one side only (17x3, 51 taps): not promoted.
    std::vector<double> wide(17 * 3);
    for (std::size_t i = 0; i < wide.size(); ++i) wide[i] = static_cast<double>(i % 5) - 2.0;
    CHECK(
        choose_variant(job_with(Filter{17, 3, wide}, Depth::u8), {&fft, &smem}, kDevice).backend ==
        &smem);
    // Rank 1 of the same size: the separable path, not fft.
    const Filter box = Filter{17, 17, std::vector<double>(17 * 17, 1.0)};
    CHECK(choose_variant(job_with(box, Depth::u8), all, kDevice).backend == &separable);
    // Dense but small: the ladder (smem) keeps its place ahead of fft.
    std::vector<double> small(25);
    for (std::size_t i = 0; i < small.size(); ++i) small[i] = static_cast<double>(i % 7) - 3.0;
    CHECK(
        choose_variant(job_with(Filter{5, 5, small}, Depth::u8), {&fft, &smem}, kDevice).backend ==
        &smem);
}

// A 4000x3000 job of `spec` at `depth`, RGB, with its output's size.
Job photo_job(const std::string& spec, Depth depth) {
    Job job = job_with(parse_filter_spec(spec), depth, 3, depth);
    job.params = centred_params(job.params.filter);
    job.src.width = job.dst.width = 4000;
    job.src.height = job.dst.height = 3000;
    job.dst.channels = 3;
    return job;
}

// The one-image rule on the jobs it was fitted to: one 12-megapixel image,
// each process timed whole (best of 5), on the H100 machine's 16 cores
// (scripts/gpu/one-image.sh, 2026-11-27 08:02 UTC; docs/PERFORMANCE.md "One
// image"): the CPU's time is the cpu variant's, with the paths and the
// input scan on all cores that this model describes. The target:
// auto within 10% of the better of `-k cpu` and the best GPU variant.
TEST_CASE("one image: auto's side is within 10% of the better, on the measured jobs", "[auto]") {
    Backend* cpu = find_backend("cpu");
    REQUIRE(cpu != nullptr);
    FakeBackend fast("fast", true, Support::yes(), kRankFast);
    const std::vector<Backend*> both{&fast, cpu};
    struct Measured {
        const char* spec;
        Depth depth;
        DecodeKind decode;
        double cpu_s, gpu_s;  // -k cpu; the fastest GPU variant
    };
    const std::string dense31 = "31x31:" + [] {
        std::string taps;
        for (int i = 0; i < 31 * 31; ++i) taps += (i ? "," : "") + std::to_string(1 + i % 7);
        return taps;
    }();
    const Measured measured[] = {
        {"edge", Depth::u8, DecodeKind::jpeg, 0.131, 0.353},
        {"gaussian:sigma=3", Depth::u8, DecodeKind::jpeg, 0.128, 0.331},
        {dense31.c_str(), Depth::u8, DecodeKind::jpeg, 0.167, 0.338},
        {"gaussian:sigma=20", Depth::u8, DecodeKind::jpeg, 0.266, 0.336},
        {"edge", Depth::u16, DecodeKind::png, 0.417, 0.458},
        {"gaussian:sigma=3", Depth::u16, DecodeKind::png, 0.466, 0.501},
        {dense31.c_str(), Depth::u16, DecodeKind::png, 0.463, 0.480},
        {"gaussian:sigma=20", Depth::u16, DecodeKind::png, 1.015, 1.246},
        {"edge", Depth::f32, DecodeKind::pfm, 0.672, 0.749},
        {"gaussian:sigma=3", Depth::f32, DecodeKind::pfm, 0.625, 0.737},
        {dense31.c_str(), Depth::f32, DecodeKind::pfm, 0.696, 0.745},
        {"gaussian:sigma=20", Depth::f32, DecodeKind::pfm, 0.697, 0.716},
    };
    for (const Measured& m : measured) {
        const Job job = photo_job(m.spec, m.depth);
        const std::int64_t bytes =
            4000 * 3000 * 3 * static_cast<std::int64_t>(depth_bytes(m.depth));
        const double decode_ms = estimated_decode_ms(m.decode, 4000 * 3000, bytes);
        const bool on_cpu = cpu_for_one_image(job, both, 16, 1, decode_ms).backend == cpu;
        const OneImageCosts costs = one_image_costs(job, *cpu, 16, 1, decode_ms);
        CAPTURE(std::string(m.spec).substr(0, 20), depth_name(m.depth), costs.cpu_ms,
                costs.cuda_ms);
        CHECK((on_cpu ? m.cpu_s : m.gpu_s) <= 1.10 * std::min(m.cpu_s, m.gpu_s));
    }
}

TEST_CASE("one image: the CPU when it costs less than CUDA's start-up and teardown", "[auto]") {
    Backend* cpu = find_backend("cpu");
    REQUIRE(cpu != nullptr);
    FakeBackend fast("fast", true, Support::yes(), kRankFast);
    const std::vector<Backend*> both{&fast, cpu};
    const Job edge = photo_job("edge", Depth::u8);
    const double jpeg_ms = estimated_decode_ms(DecodeKind::jpeg, 4000 * 3000, 36000000);
    CHECK(jpeg_ms == Approx(66.0));

    // Edge on 12 megapixels: a few ms on 16 threads, or on 1, against CUDA's
    // 200 and more.
    const AutoChoice cheap = cpu_for_one_image(edge, both, 16, 1, jpeg_ms);
    CHECK(cheap.backend == cpu);
    CHECK_THAT(cheap.reason, Catch::Contains("less than CUDA's start-up"));
    CHECK(cpu_for_one_image(edge, both, 1, 1, jpeg_ms).backend == cpu);

    // A decode hides CUDA's start-up, up to kCudaReadyMs.
    const double hidden_none = one_image_costs(edge, *cpu, 16, 1, 0.0).cuda_ms;
    CHECK(one_image_costs(edge, *cpu, 16, 1, 100.0).cuda_ms == Approx(hidden_none - 100.0));
    CHECK(one_image_costs(edge, *cpu, 16, 1, 1000.0).cuda_ms == Approx(hidden_none - kCudaReadyMs));

    // Repeats: the CPU's runs add up, CUDA's after the first are cheap.
    const OneImageCosts once = one_image_costs(edge, *cpu, 16, 1, jpeg_ms);
    const OneImageCosts often = one_image_costs(edge, *cpu, 16, 1000, jpeg_ms);
    CHECK(often.cpu_ms == Approx(1000 * once.cpu_ms));
    CHECK(often.cuda_ms < once.cuda_ms + 1000 * once.cpu_ms);
    CHECK(cpu_for_one_image(edge, both, 16, 1000, jpeg_ms).backend == nullptr);

    // A dense 61x61 filter on one thread: seconds on the CPU.
    std::vector<double> dense(61 * 61);
    for (std::size_t i = 0; i < dense.size(); ++i) dense[i] = static_cast<double>(i % 7) + 1.0;
    Job big = edge;
    big.params = centred_params(Filter{61, 61, dense});
    CHECK(cpu_for_one_image(big, both, 1, 1, jpeg_ms).backend == nullptr);

    // A cpu that refuses the job, none at all, or one without a cost model:
    // no choice.
    FakeBackend refusing("cpu", false, Support::no("not this one"), kRankCpu);
    CHECK(cpu_for_one_image(edge, {&fast, &refusing}, 16, 1, jpeg_ms).backend == nullptr);
    CHECK(cpu_for_one_image(edge, {&fast}, 16, 1, jpeg_ms).backend == nullptr);
    FakeBackend unmodelled("cpu", false, Support::yes(), kRankCpu);
    CHECK(cpu_for_one_image(edge, {&fast, &unmodelled}, 16, 1, jpeg_ms).backend == nullptr);
}

// A variant without a rank is never auto's choice, though it could run
// the job and is listed first: a named path (fast.strips), which its
// composite picks.
TEST_CASE("auto passes over variants without a rank", "[auto]") {
    FakeBackend path("fast.strips", true, Support::yes(), kNamedPath);
    FakeBackend smem("smem", true, Support::yes(), kRankSmem);
    FakeBackend ref("cpu-ref", false, Support::yes(), kRankCpuRef);
    CHECK(choose_variant(Job{}, {&path, &smem, &ref}, kDevice).backend == &smem);
    CHECK(choose_variant(Job{}, {&path, &ref}, kDevice).backend == &ref);
    const AutoChoice none = choose_variant(Job{}, {&path}, kDevice);
    CHECK(none.backend == nullptr);
    CHECK_THAT(none.reason, Catch::Contains("no variant can run this job"));
}

// The ranks' order is the measured one (core/auto_select.hpp), and the rules
// only ever move a variant up.
TEST_CASE("auto's ranks: fastest first, cpu-ref last", "[auto]") {
    const int order[] = {kRankFast, kRankFastSeparable, kRankSeparable, kRankUnrolled,
                         kRankSmem, kRankSmemCached,    kRankCmem,      kRankNaive,
                         kRankFft,  kRankCudnn,         kRankCpu,       kRankCpuRef};
    CHECK(std::adjacent_find(std::begin(order), std::end(order), std::greater_equal<>()) ==
          std::end(order));
    const Filter box{9, 9, std::vector<double>(81, 1.0 / 81)};
    CHECK(fast_separable_rank(job_with(box, Depth::f32)) < kRankFast);
    CHECK(fast_separable_rank(job_with(box, Depth::u16)) == kRankFastSeparable);
    std::vector<double> dense(17 * 17);
    for (std::size_t i = 0; i < dense.size(); ++i) dense[i] = static_cast<double>(i % 7) - 3.0;
    const Job fft_first = job_with(Filter{17, 17, dense}, Depth::u8);
    CHECK(fft_ahead_of_ladder(fft_first));
    CHECK(fft_rank(fft_first) < kRankSeparable);
    CHECK(fft_rank(fft_first) > kRankFastSeparable);
    CHECK(fft_rank(job_with(box, Depth::u8)) == kRankFft);
}

namespace {

// A CUDA variant this build has only as a stand-in (kernels/runtime/no_cuda.cpp,
// built without the CUDA toolkit): it keeps its name and parent, has no
// rank, and can run nothing.
bool is_stand_in(const Backend& b) {
    return b.uses_cuda() && b.summary().rfind("not in this build", 0) == 0;
}

}  // namespace

TEST_CASE(
    "every registered variant has an auto rank, or is a named path of a composite that has one",
    "[auto][registry]") {
    const Filter edge = Filter{3, 3, {-1, -1, -1, -1, 8, -1, -1, -1, -1}};
    const Filter box = Filter{9, 9, std::vector<double>(81, 1.0 / 81)};
    const auto& all = all_backends();
    for (std::size_t i = 0; i < all.size(); ++i) {
        const Backend& backend = *all[i];
        CAPTURE(backend.name());
        // A named path's composite is registered, ahead of it, and is no
        // path itself.
        if (!backend.parent().empty()) {
            const Backend* parent = find_backend(backend.parent());
            REQUIRE(parent != nullptr);
            CHECK(parent->parent().empty());
            const auto at = std::find_if(all.begin(), all.end(),
                                         [&](const auto& b) { return b.get() == parent; });
            CHECK(static_cast<std::size_t>(at - all.begin()) < i);
        }
        if (is_stand_in(backend)) {
            CHECK_FALSE(backend.can_run(job_with(edge, Depth::u8, 3)).ok);
            continue;
        }
        for (const Job& job : {job_with(edge, Depth::u8, 3), job_with(box, Depth::f32),
                               job_with(box, Depth::u16, 1, Depth::f32)}) {
            if (backend.parent().empty()) {
                CHECK(backend.auto_rank(job).has_value());
            } else {
                CHECK_FALSE(backend.auto_rank(job).has_value());
                const Backend* parent = find_backend(backend.parent());
                REQUIRE(parent != nullptr);
                CHECK(parent->auto_rank(job).has_value());
            }
        }
    }
}

TEST_CASE("registry names are unique and findable", "[registry]") {
    for (const auto& backend : all_backends()) {
        CHECK(find_backend(backend->name()) == backend.get());
    }
    CHECK(find_backend("no-such-variant") == nullptr);
    CHECK(find_backend("cpu-ref") != nullptr);
}

}  // namespace cudaconv
