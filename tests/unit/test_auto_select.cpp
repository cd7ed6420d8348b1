// `auto` is a pure function: these fakes stand in for variants and devices.
#include <catch2/catch.hpp>

#include "core/auto_select.hpp"
#include "variants/registry.hpp"

namespace cudaconv {
namespace {

class FakeBackend final : public Backend {
public:
    FakeBackend(std::string name, bool cuda, Support support)
        : name_(std::move(name)), cuda_(cuda), support_(std::move(support)) {}
    std::string_view name() const override { return name_; }
    std::string_view summary() const override { return "fake"; }
    bool uses_cuda() const override { return cuda_; }
    Support can_run(const Job&) const override { return support_; }
    RunTimings run(const Job&, const RunOptions&) override { return {}; }

private:
    std::string name_;
    bool cuda_;
    Support support_;
};

const DeviceContext kNoDevice{false, "no CUDA driver"};
const DeviceContext kDevice{true, ""};

}  // namespace

TEST_CASE("auto picks the CPU without a device and says why", "[auto]") {
    FakeBackend ref("cpu-ref", false, Support::yes());
    FakeBackend smem("smem", true, Support::yes());
    const AutoChoice choice = choose_variant(Job{}, {&ref, &smem}, kNoDevice);
    REQUIRE(choice.backend == &ref);
    CHECK_THAT(choice.reason, Catch::Contains("no CUDA device (no CUDA driver)"));
}

TEST_CASE("auto prefers a CUDA variant when a device is present", "[auto]") {
    FakeBackend ref("cpu-ref", false, Support::yes());
    FakeBackend naive("naive", true, Support::yes());
    FakeBackend smem("smem", true, Support::yes());
    const AutoChoice choice = choose_variant(Job{}, {&ref, &naive, &smem}, kDevice);
    REQUIRE(choice.backend == &smem);
    CHECK_THAT(choice.reason, Catch::Contains("CUDA"));
}

TEST_CASE("auto passes over refusing variants and reports their reasons", "[auto]") {
    FakeBackend ref("cpu-ref", false, Support::yes());
    FakeBackend separable("separable", true, Support::no("the filter is not rank 1"));
    FakeBackend naive("naive", true, Support::yes());
    const AutoChoice choice = choose_variant(Job{}, {&ref, &separable, &naive}, kDevice);
    REQUIRE(choice.backend == &naive);
    CHECK_THAT(choice.reason, Catch::Contains("separable refused: the filter is not rank 1"));
}

TEST_CASE("auto falls back to the CPU when every CUDA variant refuses", "[auto]") {
    FakeBackend ref("cpu-ref", false, Support::yes());
    FakeBackend naive("naive", true, Support::no("image too large for the device"));
    const AutoChoice choice = choose_variant(Job{}, {&ref, &naive}, kDevice);
    REQUIRE(choice.backend == &ref);
    CHECK_THAT(choice.reason, Catch::Contains("no CUDA variant can run this job"));
}

TEST_CASE("auto reports when nothing can run", "[auto]") {
    FakeBackend naive("naive", true, Support::no("too big"));
    const AutoChoice choice = choose_variant(Job{}, {&naive}, kDevice);
    CHECK(choice.backend == nullptr);
    CHECK_THAT(choice.reason, Catch::Contains("naive refused: too big"));
}

// A job with no pixels, only what auto_preference() reads: the filter, the
// input's depth and channels and the output's depth.
Job job_with(Filter filter, Depth depth, int channels = 1, Depth out_depth = Depth::u8) {
    Job job;
    job.params.filter = std::move(filter);
    job.src.depth = depth;
    job.src.channels = channels;
    job.dst.depth = out_depth;
    return job;
}

TEST_CASE(
    "auto's measured order: rank 1 on gray f32 from 9x9, on u8 from 7x7 (RGB from 5x5), "
    "to fast-separable",
    "[auto]") {
    FakeBackend fast("fast", true, Support::yes());
    FakeBackend fast_separable("fast-separable", true, Support::yes());
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

TEST_CASE("auto's measured order: dense filters past 15x15 go to fft before the ladder",
          "[auto]") {
    FakeBackend fft("fft", true, Support::yes());
    FakeBackend smem("smem", true, Support::yes());
    FakeBackend separable("separable", true, Support::yes());
    const std::vector<Backend*> all{&smem, &separable, &fft};
    std::vector<double> dense(17 * 17);
    for (std::size_t i = 0; i < dense.size(); ++i) dense[i] = static_cast<double>(i % 7) - 3.0;
    CHECK(choose_variant(job_with(Filter{17, 17, dense}, Depth::u8), all, kDevice).backend ==
          &fft);
    // A float output keeps SPEC's 1e-5: the direct variants, not fft.
    CHECK(choose_variant(job_with(Filter{17, 17, dense}, Depth::f32, 1, Depth::f32), all,
                         kDevice)
              .backend == &separable);
    // Past 15 on one side only (17x3, 51 taps): not promoted.
    std::vector<double> wide(17 * 3);
    for (std::size_t i = 0; i < wide.size(); ++i) wide[i] = static_cast<double>(i % 5) - 2.0;
    CHECK(choose_variant(job_with(Filter{17, 3, wide}, Depth::u8), {&fft, &smem}, kDevice)
              .backend == &smem);
    // Rank 1 of the same size: the separable path, not fft.
    const Filter box = Filter{17, 17, std::vector<double>(17 * 17, 1.0)};
    CHECK(choose_variant(job_with(box, Depth::u8), all, kDevice).backend == &separable);
    // Dense but small: the ladder (smem) keeps its place ahead of fft.
    std::vector<double> small(25);
    for (std::size_t i = 0; i < small.size(); ++i) small[i] = static_cast<double>(i % 7) - 3.0;
    CHECK(choose_variant(job_with(Filter{5, 5, small}, Depth::u8), {&fft, &smem}, kDevice)
              .backend == &smem);
}

// estimated_cpu_ms: multiply-adds plus the per-sample overhead, at the
// assumed rate on every core.
TEST_CASE("one image: the CPU when it beats CUDA's start-up, the GPU otherwise", "[auto]") {
    CHECK(estimated_cpu_ms(1000000, 9, 1) ==
          Approx(1000.0 * 1e6 * (9 + kCpuSampleOverhead) / kCpuTapsPerSecondPerCore));
    CHECK(estimated_cpu_ms(1000000, 9, 4) == Approx(estimated_cpu_ms(1000000, 9, 1) / 4));

    FakeBackend cpu("cpu", false, Support::yes());
    FakeBackend fast("fast", true, Support::yes());
    const std::vector<Backend*> both{&fast, &cpu};
    const Filter edge = Filter{3, 3, {-1, -1, -1, -1, 8, -1, -1, -1, -1}};
    std::vector<double> dense(31 * 31);
    for (std::size_t i = 0; i < dense.size(); ++i) dense[i] = static_cast<double>(i % 7) - 3.0;
    Job photo = job_with(edge, Depth::u8, 3);
    photo.src.width = 4000;
    photo.src.height = 3000;
    // Edge on 12 megapixels of RGB with 16 cores: 19.5 ms by the estimate.
    const AutoChoice cheap = cpu_for_one_image(photo, both, 16);
    CHECK(cheap.backend == &cpu);
    CHECK_THAT(cheap.reason, Catch::Contains("less than CUDA's start-up"));
    // On one core it would take 312 ms: over the start-up, so no choice.
    CHECK(cpu_for_one_image(photo, both, 1).backend == nullptr);
    // Timed 20 times (--warmup and --repeat): 390 ms on 16 cores, no choice.
    CHECK(cpu_for_one_image(photo, both, 16, 15).backend == &cpu);
    CHECK(cpu_for_one_image(photo, both, 16, 20).backend == nullptr);
    // 31x31 taps: seconds on the CPU.
    photo.params.filter = Filter{31, 31, dense};
    CHECK(cpu_for_one_image(photo, both, 16).backend == nullptr);
    // A cpu that refuses the job, or none at all: no choice.
    photo.params.filter = edge;
    FakeBackend refusing("cpu", false, Support::no("not this one"));
    CHECK(cpu_for_one_image(photo, {&fast, &refusing}, 16).backend == nullptr);
    CHECK(cpu_for_one_image(photo, {&fast}, 16).backend == nullptr);
}

TEST_CASE("every registered variant is in auto's preference list", "[auto][registry]") {
    for (const auto& backend : all_backends()) {
        CAPTURE(backend->name());
        CHECK(std::find(kAutoPreference.begin(), kAutoPreference.end(), backend->name()) !=
              kAutoPreference.end());
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
