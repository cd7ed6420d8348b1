// fast's register path (kernels/fast_registers.cu), its host side: which
// jobs it takes and its block height. The GPU tests compare its outputs
// with cpu-ref; these need no device.
#include <catch2/catch.hpp>

#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

#include "kernels/fast/fast_registers.hpp"
#include "support/scoped_env.hpp"

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

TEST_CASE("fast's register path: blocks of 4 rows as measured", "[strips]") {
    const ScopedEnv unset("CUDACONV_FAST_REGISTERS", nullptr);
    for (const auto& [w, h] : {std::pair{780, 585}, {2000, 1000}, {4000, 3000}, {8000, 6000}}) {
        CHECK(registers_block_rows(w, h) == 4);
    }
    {
        const ScopedEnv eight("CUDACONV_FAST_REGISTERS", "8");
        CHECK(registers_block_rows(4000, 3000) == 8);
    }
    {
        const ScopedEnv unknown("CUDACONV_FAST_REGISTERS", "3");  // not a height it has
        CHECK(registers_block_rows(4000, 3000) == 4);
    }
}

// A change to a job, named for the test's output.
using JobChange = std::pair<const char*, void (*)(DeviceJob&)>;

// Whether the register path takes `base` after each change.
void check_takes(const DeviceJob& base, const std::vector<double>& taps,
                 std::initializer_list<JobChange> changes, bool taken) {
    for (const auto& [what, change] : changes) {
        DeviceJob job = base;
        change(job);
        INFO(what);
        CHECK(registers_take(job, taps) == taken);
    }
}

TEST_CASE("fast's register path: gray f32 3x3", "[strips]") {
    const ScopedEnv unset("CUDACONV_FAST_REGISTERS", nullptr);
    CHECK(registers_take(gray_f32_3x3(1, 1), kBox));
    const DeviceJob base = gray_f32_3x3(4000, 3000);
    check_takes(base, kBox,
                {{"as it is", [](DeviceJob&) {}},
                 {"into u8", [](DeviceJob& j) { j.out_depth = Depth::u8; }},
                 {"a constant border", [](DeviceJob& j) {
                      j.border = BorderMode::constant;
                      j.border_value = 0.5f;
                  }}},
                true);
    // Everything else stays with the strip path (or the tile path).
    check_takes(base, kBox,
                {{"3 channels", [](DeviceJob& j) { j.channels = j.filtered_channels = 3; }},
                 {"an anchor off the centre", [](DeviceJob& j) { j.origin_x = 0; }},
                 {"the valid border", [](DeviceJob& j) { j.border = BorderMode::valid; }}},
                false);
    DeviceJob job = base;
    job.filter_width = job.filter_height = 5;
    job.origin_x = job.origin_y = -2;
    CHECK_FALSE(registers_take(job, std::vector<double>(25, 1.0)));
    const ScopedEnv off("CUDACONV_FAST_REGISTERS", "0");
    CHECK_FALSE(registers_take(base, kBox));
}

TEST_CASE("fast's register path: u8 3x3 with integer taps summed as they are", "[strips]") {
    const ScopedEnv unset("CUDACONV_FAST_REGISTERS", nullptr);
    const ScopedEnv dp4a("CUDACONV_FAST_STRIPS_DP4A", nullptr);
    CHECK(registers_take(rgb_u8_3x3(1, 1), kEdge));
    const DeviceJob base = rgb_u8_3x3(1000, 1000);
    CHECK(registers_take(base, {-128, 127, 0, 1, 2, 3, -4, -5, 6}));  // the ends of s8
    check_takes(base, kEdge,
                {{"RGB", [](DeviceJob&) {}},
                 {"gray", [](DeviceJob& j) { j.channels = j.filtered_channels = 1; }},
                 {"RGBA, alpha filtered", [](DeviceJob& j) { j.channels = j.filtered_channels = 4; }},
                 {"made absolute", [](DeviceJob& j) { j.take_abs = true; }},
                 {"a constant border of 255", [](DeviceJob& j) {
                      j.border = BorderMode::constant;
                      j.border_value = 255.0f;
                  }}},
                true);
    // The rest goes to the strip path.
    check_takes(base, kEdge,
                {{"a float finish (scale)", [](DeviceJob& j) { j.scale = 0.5f; }},
                 {"a float finish (delta)", [](DeviceJob& j) { j.delta = 1.0f; }},
                 {"alpha kept", [](DeviceJob& j) { j.channels = 4; }},
                 {"into f32", [](DeviceJob& j) { j.out_depth = Depth::f32; }},
                 {"a border value no u8 holds", [](DeviceJob& j) {
                      j.border = BorderMode::constant;
                      j.border_value = 0.5f;
                  }},
                 {"2 channels", [](DeviceJob& j) { j.channels = j.filtered_channels = 2; }}},
                false);
    CHECK_FALSE(registers_take(base, kBox));  // taps that are not integers
    CHECK_FALSE(registers_take(base, {-1, -1, -1, -1, 128, -1, -1, -1, -1}));  // past s8
    {
        const ScopedEnv off("CUDACONV_FAST_STRIPS_DP4A", "0");
        CHECK_FALSE(registers_take(base, kEdge));
    }
    const ScopedEnv off("CUDACONV_FAST_REGISTERS", "0");
    CHECK_FALSE(registers_take(base, kEdge));
}

TEST_CASE("fast's register path: RGBA u8 up to 24 MiB a frame, gray and RGB u8 at any size",
          "[strips]") {
    const ScopedEnv dp4a("CUDACONV_FAST_STRIPS_DP4A", nullptr);
    auto rgba = [](int width, int height) {
        DeviceJob job = rgb_u8_3x3(width, height);
        job.channels = job.filtered_channels = 4;
        return job;
    };
    {
        const ScopedEnv unset("CUDACONV_FAST_REGISTERS", nullptr);
        CHECK(registers_take(rgb_u8_3x3(3000, 2000), kEdge));
        CHECK(registers_take(rgb_u8_3x3(4000, 3000), kEdge));
        CHECK(registers_take(rgb_u8_3x3(8000, 6000), kEdge));
        CHECK(registers_take(rgba(3072, 2048), kEdge));         // 24 MiB
        CHECK_FALSE(registers_take(rgba(3072, 2049), kEdge));   // a row more
        CHECK_FALSE(registers_take(rgba(4000, 3000), kEdge));
        DeviceJob job = rgb_u8_3x3(8000, 6000);
        job.channels = job.filtered_channels = 1;
        CHECK(registers_take(job, kEdge));
    }
    // Asked for by name (tests, sweeps): any size.
    const ScopedEnv asked("CUDACONV_FAST_REGISTERS", "4");
    CHECK(registers_take(rgba(4000, 3000), kEdge));
}

TEST_CASE("fast's register path: the u8 walk's bands of 8 rows", "[strips]") {
    {
        const ScopedEnv unset("CUDACONV_FAST_WALK", nullptr);
        CHECK(registers_u8_band_rows() == 8);
    }
    const std::pair<const char*, int> cases[] = {{"4", 4}, {"5", 8}, {"20", 20}, {"0", 8}, {"x", 8}};
    for (const auto& [text, rows] : cases) {
        const ScopedEnv walk("CUDACONV_FAST_WALK", text);
        CHECK(registers_u8_band_rows() == rows);
    }
}

// The tail walk's rows, on an H100's 2640 resident warps: half a wave's
// from 1.5 waves of bands on, rounded so that the bands above stay whole;
// the whole image under 3/4 of a wave; none between; or as many as
// CUDACONV_FAST_WALK_TAIL asks.
TEST_CASE("fast's register path: the u8 walk's tail", "[strips]") {
    constexpr std::int64_t kResident = 2640;
    {
        const ScopedEnv unset("CUDACONV_FAST_WALK_TAIL", nullptr);
        // 4000x3000 RGB: 24 bands across, 375 down (3.4 waves); 1320 warps
        // are 55 bands of 4 rows across, 220 rows, 224 with whole bands.
        CHECK(registers_u8_tail_rows(3000, 24, 8, kResident) == 224);
        CHECK(registers_u8_tail_rows(3001, 24, 8, kResident) == 225);
        CHECK(registers_u8_tail_rows(585, 5, 8, kResident) == 585);    // 780x585 RGB: 0.14 waves
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
    }
    // Asked for in rows (tests, sweeps), rounded the same way.
    const std::pair<const char*, std::int64_t> set[] = {{"0", 0},    {"100000", 3000}, {"24", 24}, {"20", 24},
                                                        {"1", 8},    {"x", 224},       {"-1", 224}, {"5%", 224},
                                                        {"", 224}};
    for (const auto& [text, rows] : set) {
        const ScopedEnv tail("CUDACONV_FAST_WALK_TAIL", text);
        CHECK(registers_u8_tail_rows(3000, 24, 8, kResident) == rows);
    }
}

}  // namespace cudaconv::test
