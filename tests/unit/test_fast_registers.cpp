// fast's register paths, fast.registers (kernels/fast/fast_registers.cu) and
// fast.walk-u8 (kernels/fast/fast_registers_u8.cu), their host side: which jobs
// each can run, which fast picks, and the heights their rules and tuning
// values give. The GPU tests compare their outputs with cpu-ref; these need
// no device.
#include <catch2/catch.hpp>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/tuning.hpp"
#include "kernels/fast/fast_registers.hpp"
#include "kernels/fast/fast_strips.hpp"

namespace cudaconv::test {
namespace {

DeviceJob gray_f32_3x3(std::int64_t width, std::int64_t height) {
    DeviceJob job;
    job.src_width = job.dst_width = width;
    job.src_height = job.dst_height = height;
    job.channels = job.filtered_channels = 1;
    job.in_depth = Depth::f32;
    job.out_depth = Depth::f32;
    job.filter_width = job.filter_height = 3;
    job.origin_x = job.origin_y = -1;
    job.border = BorderMode::reflect101;
    return job;
}

DeviceJob rgb_u8_3x3(std::int64_t width, std::int64_t height) {
    DeviceJob job = gray_f32_3x3(width, height);
    job.channels = job.filtered_channels = 3;
    job.in_depth = job.out_depth = Depth::u8;
    return job;
}

// SPEC's edge filter, and a 3x3 box (taps of 1/9, not integers).
const std::vector<double> kEdge{-1, -1, -1, -1, 8, -1, -1, -1, -1};
const std::vector<double> kBox(9, 1.0 / 9.0);

}  // namespace

TEST_CASE("fast.registers: blocks of 4 rows as measured, 4 or 8 as tuned", "[strips]") {
    for (const auto& [w, h] : {std::pair{780, 585}, {2000, 1000}, {4000, 3000}, {8000, 6000}}) {
        CHECK(registers_block_rows(w, h) == 4);
    }
    // block_rows sets the height (the run takes 4 or 8); heights out of its
    // range are refused before a run.
    const std::vector<TuningParam> params = registers_f32_tuning_params();
    REQUIRE(params.size() == 1);
    CHECK(params[0].name == "block_rows");
    CHECK(tuning_refusal(Tuning{{"block_rows", 8}}, params, "fast.registers").empty());
    CHECK(tuning_refusal(Tuning{{"block_rows", 4}}, params, "fast.registers").empty());
    CHECK_FALSE(tuning_refusal(Tuning{{"block_rows", 3}}, params, "fast.registers").empty());
    CHECK_FALSE(tuning_refusal(Tuning{{"block_rows", 16}}, params, "fast.registers").empty());
    CHECK_FALSE(tuning_refusal(Tuning{{"band_rows", 8}}, params, "fast.registers").empty());
}

// A change to a job, named for the test's output.
using JobChange = std::pair<const char*, void (*)(DeviceJob&)>;

// Whether a path can run `base` after each change: `refusal` says why not,
// empty when it can.
template <typename Refusal>
void check_runs(const DeviceJob& base, Refusal refusal, std::initializer_list<JobChange> changes,
                bool runs) {
    for (const auto& [what, change] : changes) {
        DeviceJob job = base;
        change(job);
        INFO(what);
        const std::string why = refusal(job);
        INFO(why);
        CHECK(why.empty() == runs);
    }
}

TEST_CASE("fast.registers: gray f32 3x3", "[strips]") {
    const auto refusal = [](const DeviceJob& job) { return registers_f32_refusal(job); };
    CHECK(registers_f32_refusal(gray_f32_3x3(1, 1)).empty());
    const DeviceJob base = gray_f32_3x3(4000, 3000);
    check_runs(base, refusal,
               {{"as it is", [](DeviceJob&) {}},
                {"into u8", [](DeviceJob& j) { j.out_depth = Depth::u8; }},
                {"a constant border",
                 [](DeviceJob& j) {
                     j.border = BorderMode::constant;
                     j.border_value = 0.5f;
                 }}},
               true);
    // Everything else stays with fast.strips (or fast.tiles).
    check_runs(base, refusal,
               {{"3 channels", [](DeviceJob& j) { j.channels = j.filtered_channels = 3; }},
                {"u8", [](DeviceJob& j) { j.in_depth = Depth::u8; }},
                {"an anchor off the centre", [](DeviceJob& j) { j.origin_x = 0; }},
                {"the valid border", [](DeviceJob& j) { j.border = BorderMode::valid; }},
                {"5x5",
                 [](DeviceJob& j) {
                     j.filter_width = j.filter_height = 5;
                     j.origin_x = j.origin_y = -2;
                 }}},
               false);
    // Its jobs run on the strips too, when asked for by name (fast.strips).
    CHECK(strips_refusal(base).empty());
}

TEST_CASE("fast.walk-u8: u8 3x3 with integer taps summed as they are", "[strips]") {
    const auto edge = [](const DeviceJob& job) { return walk_u8_refusal(job, kEdge); };
    CHECK(walk_u8_refusal(rgb_u8_3x3(1, 1), kEdge).empty());
    const DeviceJob base = rgb_u8_3x3(1000, 1000);
    CHECK(walk_u8_refusal(base, {-128, 127, 0, 1, 2, 3, -4, -5, 6}).empty());  // the ends of s8
    check_runs(
        base, edge,
        {{"RGB", [](DeviceJob&) {}},
         {"gray", [](DeviceJob& j) { j.channels = j.filtered_channels = 1; }},
         {"RGBA, alpha filtered", [](DeviceJob& j) { j.channels = j.filtered_channels = 4; }},
         {"made absolute", [](DeviceJob& j) { j.take_abs = true; }},
         {"a constant border of 255",
          [](DeviceJob& j) {
              j.border = BorderMode::constant;
              j.border_value = 255.0f;
          }}},
        true);
    // The rest goes to fast.strips.
    check_runs(base, edge,
               {{"a float finish (scale)", [](DeviceJob& j) { j.scale = 0.5f; }},
                {"a float finish (delta)", [](DeviceJob& j) { j.delta = 1.0f; }},
                {"alpha kept", [](DeviceJob& j) { j.channels = 4; }},
                {"into f32", [](DeviceJob& j) { j.out_depth = Depth::f32; }},
                {"f32 in", [](DeviceJob& j) { j.in_depth = Depth::f32; }},
                {"a border value no u8 holds",
                 [](DeviceJob& j) {
                     j.border = BorderMode::constant;
                     j.border_value = 0.5f;
                 }},
                {"2 channels", [](DeviceJob& j) { j.channels = j.filtered_channels = 2; }},
                {"the valid border", [](DeviceJob& j) { j.border = BorderMode::valid; }}},
               false);
    CHECK_FALSE(walk_u8_refusal(base, kBox).empty());  // taps that are not integers
    CHECK_FALSE(walk_u8_refusal(base, {-1, -1, -1, -1, 128, -1, -1, -1, -1}).empty());  // past s8
    // fast.strips runs the same jobs, by name, and sums them in floats
    // with dp4a=0.
    CHECK(strips_refusal(base).empty());
    CHECK_FALSE(strip_settings(Tuning{{"dp4a", 0}}).dp4a);
}

TEST_CASE("fast.walk-u8: fast picks it for RGBA u8 up to 24 MiB a frame, gray and RGB at any size",
          "[strips]") {
    auto rgba = [](int width, int height) {
        DeviceJob job = rgb_u8_3x3(width, height);
        job.channels = job.filtered_channels = 4;
        return job;
    };
    CHECK(walk_u8_preferred(rgb_u8_3x3(3000, 2000)));
    CHECK(walk_u8_preferred(rgb_u8_3x3(4000, 3000)));
    CHECK(walk_u8_preferred(rgb_u8_3x3(8000, 6000)));
    CHECK(walk_u8_preferred(rgba(3072, 2048)));        // 24 MiB
    CHECK_FALSE(walk_u8_preferred(rgba(3072, 2049)));  // a row more
    CHECK_FALSE(walk_u8_preferred(rgba(4000, 3000)));
    DeviceJob gray = rgb_u8_3x3(8000, 6000);
    gray.channels = gray.filtered_channels = 1;
    CHECK(walk_u8_preferred(gray));
    // Asked for by name (fast.walk-u8): any size; fast gives the larger
    // RGBA images to fast.strips.
    CHECK(walk_u8_refusal(rgba(4000, 3000), kEdge).empty());
    CHECK(strips_refusal(rgba(4000, 3000)).empty());
}

TEST_CASE("fast.walk-u8: bands of 8 rows, or band_rows in whole blocks of 4", "[strips]") {
    CHECK(walk_settings(Tuning{}).band_rows == 8);
    CHECK_FALSE(walk_settings(Tuning{}).tail_rows.has_value());
    const std::pair<int, int> cases[] = {{4, 4}, {5, 8}, {20, 20}, {1, 4}, {4096, 4096}};
    for (const auto& [asked, rows] : cases) {
        CAPTURE(asked);
        CHECK(walk_settings(Tuning{{"band_rows", asked}}).band_rows == rows);
    }
    // Heights past its range are refused before a run, and a value that is
    // not a number is no tuning value at all.
    const std::vector<TuningParam> params = walk_u8_tuning_params();
    CHECK(tuning_refusal(Tuning{{"band_rows", 20}, {"tail_rows", 9}}, params, "fast.walk-u8")
              .empty());
    CHECK_FALSE(tuning_refusal(Tuning{{"band_rows", 0}}, params, "fast.walk-u8").empty());
    CHECK_FALSE(tuning_refusal(Tuning{{"band_rows", 4097}}, params, "fast.walk-u8").empty());
    CHECK_FALSE(tuning_refusal(Tuning{{"tail_rows", -1}}, params, "fast.walk-u8").empty());
    CHECK_FALSE(tuning_refusal(Tuning{{"block_rows", 4}}, params, "fast.walk-u8").empty());
    CHECK_THROWS_AS(parse_tuning_param("band_rows=x"), std::invalid_argument);
    CHECK_THROWS_AS(parse_tuning_param("tail_rows=5%"), std::invalid_argument);
    CHECK_THROWS_AS(parse_tuning_param("tail_rows="), std::invalid_argument);
    CHECK(walk_settings(Tuning{{"tail_rows", 9}}).tail_rows == std::int64_t{9});
    CHECK(walk_settings(Tuning{{"tail_rows", 0}}).tail_rows == std::int64_t{0});
}

// The tail walk's rows, on an H100's 2640 resident warps: half a wave's
// from 1.5 waves of bands on, rounded so that the bands above stay whole;
// the whole image under 3/4 of a wave; none between; or as many as
// asked for (tail_rows).
TEST_CASE("fast.walk-u8: the tail", "[strips]") {
    constexpr std::int64_t kResident = 2640;
    // 4000x3000 RGB: 24 bands across, 375 down (3.4 waves); 1320 warps
    // are 55 bands of 4 rows across, 220 rows, 224 with whole bands.
    CHECK(registers_u8_tail_rows(3000, 24, 8, kResident) == 224);
    CHECK(registers_u8_tail_rows(3001, 24, 8, kResident) == 225);
    CHECK(registers_u8_tail_rows(585, 5, 8, kResident) == 585);     // 780x585 RGB: 0.14 waves
    CHECK(registers_u8_tail_rows(1080, 12, 8, kResident) == 1080);  // 1920x1080 RGB: 0.61
    CHECK(registers_u8_tail_rows(1440, 15, 8, kResident) == 0);     // 2560x1440 RGB: 1.02
    CHECK(registers_u8_tail_rows(3000, 8, 8, kResident) == 0);      // 4000x3000 gray: 1.14
    // The edges: 3/4 of a wave (1980 warps) takes the whole image, 1.5
    // waves (3960) half a wave: 1320 warps over 10 bands across, 528
    // rows, rounded up to whole bands of 8.
    CHECK(registers_u8_tail_rows(1584, 10, 8, kResident) == 1584);
    CHECK(registers_u8_tail_rows(1592, 10, 8, kResident) == 0);
    CHECK(registers_u8_tail_rows(3160, 10, 8, kResident) == 0);
    CHECK(registers_u8_tail_rows(3168, 10, 8, kResident) == 528);
    // Bands of 20 rows: the rows above the tail stay whole bands.
    CHECK((3000 - registers_u8_tail_rows(3000, 24, 20, kResident)) % 20 == 0);
    // Asked for in rows (tail_rows), rounded the same way; unset (or
    // negative) leaves the rule.
    const std::pair<std::optional<std::int64_t>, std::int64_t> set[] = {
        {0, 0}, {100000, 3000}, {24, 24}, {20, 24}, {1, 8}, {std::nullopt, 224}, {-1, 224}};
    for (const auto& [wanted, rows] : set) {
        CAPTURE(wanted.value_or(-2));
        CHECK(registers_u8_tail_rows(3000, 24, 8, kResident, wanted) == rows);
    }
    // As a run takes it: walk_settings' tail_rows.
    CHECK(registers_u8_tail_rows(3000, 24, 8, kResident,
                                 walk_settings(Tuning{{"tail_rows", 20}}).tail_rows) == 24);
    CHECK(registers_u8_tail_rows(3000, 24, 8, kResident, walk_settings(Tuning{}).tail_rows) == 224);
}

}  // namespace cudaconv::test
