// fast.strips (kernels/fast/fast_strips.cu), its host side: which jobs it can
// run, which filters take the integer (DP4A) path and the tap words it
// gives the device, decoded here byte by byte, the band heights and heads
// its rules choose, and what its tuning values set instead
// (strip_settings). The GPU tests compare the path's outputs with cpu-ref;
// these need no device.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/tuning.hpp"
#include "filters/named.hpp"
#include "kernels/fast/fast_strips.hpp"

namespace cudaconv::test {
namespace {

// Byte b of word w as DP4A's signed operand reads it.
int signed_byte(std::int32_t word, int b) {
    return static_cast<std::int8_t>((static_cast<std::uint32_t>(word) >> (8 * b)) & 0xffu);
}

// Every tap of the filter, read back from the words as the kernel reads
// them (row j, group g, byte b is column 4 g + b), and zero past the row.
void check_words_hold(const std::vector<double>& taps, int side,
                      const std::vector<std::int32_t>& words) {
    REQUIRE(words.size() == static_cast<std::size_t>(side) * kDp4aGroups);
    for (int j = 0; j < side; ++j) {
        for (int g = 0; g < kDp4aGroups; ++g) {
            for (int b = 0; b < 4; ++b) {
                const int column = 4 * g + b;
                const int expected =
                    column < side
                        ? static_cast<int>(taps[static_cast<std::size_t>(j) * side + column])
                        : 0;
                CHECK(signed_byte(words[static_cast<std::size_t>(j) * kDp4aGroups + g], b) ==
                      expected);
            }
        }
    }
}

}  // namespace

TEST_CASE("fast's integer path: the edge filter's tap words", "[strips]") {
    const Filter edge = make_named_filter("edge").value();
    const std::vector<std::int32_t> words = strips_dp4a_words(edge.taps, 3);
    // [-1 -1 -1; -1 8 -1; -1 -1 -1]: bytes ff ff ff 00, ff 08 ff 00, ...
    REQUIRE(words.size() == 6);
    CHECK(static_cast<std::uint32_t>(words[0]) == 0x00ffffffu);
    CHECK(words[1] == 0);
    CHECK(static_cast<std::uint32_t>(words[2]) == 0x00ff08ffu);
    CHECK(static_cast<std::uint32_t>(words[4]) == 0x00ffffffu);
}

TEST_CASE("fast's integer path: random integer taps of every side, to the ends of s8", "[strips]") {
    std::mt19937_64 gen(7);
    std::uniform_int_distribution<int> tap(-128, 127);
    for (int side = 1; side <= 7; ++side) {
        for (int trial = 0; trial < 20; ++trial) {
            std::vector<double> taps(static_cast<std::size_t>(side) * side);
            for (double& t : taps) t = tap(gen);
            taps.front() = -128.0;
            taps.back() = 127.0;
            const std::vector<std::int32_t> words = strips_dp4a_words(taps, side);
            check_words_hold(taps, side, words);
        }
    }
}

TEST_CASE("fast's integer path: filters it leaves to the float path", "[strips]") {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    for (double bad : {0.5, -0.25, 128.0, -129.0, 1e9, nan, inf, -inf}) {
        std::vector<double> taps(9, 1.0);
        taps[4] = bad;
        CHECK(strips_dp4a_words(taps, 3).empty());
    }
    // A tap that is an integer only once rounded to float (the device's
    // taps are floats, so the float is what counts): 3 + 2^-30.
    std::vector<double> near_integer(9, 1.0);
    near_integer[0] = 3.0 + std::ldexp(1.0, -30);
    CHECK_FALSE(strips_dp4a_words(near_integer, 3).empty());
    // Sides past 7 and taps that do not make a square of the side.
    CHECK(strips_dp4a_words(std::vector<double>(81, 1.0), 9).empty());
    CHECK(strips_dp4a_words(std::vector<double>(8, 1.0), 3).empty());
    CHECK(strips_dp4a_words({}, 0).empty());
    // Gaussians and boxes are not integer taps once normalised.
    CHECK(strips_dp4a_words(make_named_filter("gaussian:3").value().taps, 3).empty());
}

TEST_CASE("fast's integer path: on unless dp4a=0", "[strips]") {
    CHECK(strip_settings(Tuning{}).dp4a);
    CHECK(strip_settings(Tuning{{"dp4a", 1}}).dp4a);
    CHECK_FALSE(strip_settings(Tuning{{"dp4a", 0}}).dp4a);
}

// The band heights measured best on an H100 (kernels/fast/fast_strips.cu,
// docs/PERFORMANCE.md), for 4000x3000 images: `across` is the bands side by
// side, a warp's output width apart (30 lanes of 16 bytes; of 8 bytes for
// u8 under 5x5 and 7x7).
TEST_CASE("fast's strip path: band heights as measured", "[strips]") {
    CHECK(strips_band_rows(34, 3000, 3, true) == 6);    // gray f32 3x3
    CHECK(strips_band_rows(34, 3000, 5, true) == 12);   // gray f32 5x5
    CHECK(strips_band_rows(34, 3000, 7, true) == 16);   // gray f32 7x7
    CHECK(strips_band_rows(100, 3000, 3, true) == 16);  // RGB f32 3x3
    CHECK(strips_band_rows(25, 3000, 3, false) == 8);   // RGB u8 3x3
    CHECK(strips_band_rows(9, 3000, 3, false) == 4);    // gray u8 3x3
    CHECK(strips_band_rows(50, 3000, 5, false) == 16);  // RGB u8 5x5
    CHECK(strips_band_rows(17, 3000, 5, false) == 8);   // gray u8 5x5: never 3 (Side - 1)
    // Small images keep the least, 4 rows (or 2 (Side - 1)).
    CHECK(strips_band_rows(25, 2000, 3, true) == 4);  // 3000x2000 gray f32 3x3
    CHECK(strips_band_rows(17, 1000, 3, true) == 4);  // 2000x1000 gray f32 3x3
    CHECK(strips_band_rows(7, 585, 3, true) == 4);
    CHECK(strips_band_rows(7, 585, 7, false) == 16);
    // band_rows sets the height instead; unset (0), the rule's.
    CHECK(strip_settings(Tuning{}).band_rows == 0);
    CHECK(strip_settings(Tuning{{"band_rows", 6}}).band_rows == 6);
}

// The head of rising bands (StripHead): rows of bands that tile the top of
// the image with no gap or overlap, only where it was measured faster
// (kernels/fast/fast_strips.cu).
TEST_CASE("fast's strip path: the head's bands as measured", "[strips]") {
    // 4000x3000 RGB u8 edge on an H100: 132 SMs x 5 blocks x 4 warps.
    const StripHead rgb = strips_head(25, 3000, 3, 8, false, 2640);
    CHECK(rgb.low == 2);
    CHECK(rgb.group == 5);
    CHECK(rgb.count == 23 * 5);  // heights 2 ... 24
    CHECK(rgb.height(0) == 2);
    CHECK(rgb.height(rgb.count - 1) == 24);
    CHECK(rgb.end() == 5 * (2 + 24) * 23 / 2);
    std::int64_t next = 0;
    for (int j = 0; j <= rgb.count; ++j) {
        CHECK(rgb.start(j) == next);
        if (j < rgb.count) next += rgb.height(j);
    }
    CHECK(strips_head(34, 3000, 3, 8, false, 2640).group == 4);  // RGBA u8 edge
    // Not measured faster: f32, bands of 4, 5x5, an image the GPU holds in
    // less than two waves, one too short for the head.
    CHECK(strips_head(34, 3000, 3, 6, true, 132 * 28).count == 0);
    CHECK(strips_head(9, 3000, 3, 4, false, 2640).count == 0);
    CHECK(strips_head(34, 3000, 5, 8, false, 2640).count == 0);
    CHECK(strips_head(25, 1000, 3, 8, false, 2640).count == 0);
    // An image too short for the head: none, or one that reaches its last
    // row, which the launch drops (as it drops such a head set by tuning
    // values).
    const StripHead short_image = strips_head(1000, 100, 3, 8, false, 2640);
    CHECK((short_image.count == 0 || short_image.end() >= 100));
}

// What the tuning values set in place of the rules: unset, the rules;
// band_rows the bands' height; head=0 no head; head_low, head_high and
// head_group a head of any strip job, the three together; sides_first=0 a
// band's side columns after its middle; dp4a=0 integer taps summed in
// floats.
TEST_CASE("fast's strip path: strip_settings from tuning values", "[strips]") {
    const StripSettings rules = strip_settings(Tuning{});
    CHECK(rules.band_rows == 0);
    CHECK_FALSE(rules.head.has_value());
    CHECK(rules.sides_first);
    CHECK(rules.dp4a);

    const StripSettings off = strip_settings(Tuning{{"head", 0}});
    REQUIRE(off.head.has_value());
    CHECK(off.head->count == 0);
    CHECK(off.head->end() == 0);

    const StripSettings swept =
        strip_settings(Tuning{{"head_low", 1}, {"head_high", 20}, {"head_group", 6}});
    REQUIRE(swept.head.has_value());
    CHECK(swept.head->count == 20 * 6);
    CHECK(swept.head->group == 6);
    CHECK(swept.head->height(0) == 1);
    CHECK(swept.head->height(swept.head->count - 1) == 20);
    CHECK(swept.head->end() == 6 * (1 + 20) * 20 / 2);
    const StripSettings one =
        strip_settings(Tuning{{"head_low", 3}, {"head_high", 3}, {"head_group", 1}});
    REQUIRE(one.head.has_value());
    CHECK(one.head->count == 1);
    CHECK(one.head->height(0) == 3);

    CHECK_FALSE(strip_settings(Tuning{{"sides_first", 0}}).sides_first);
    CHECK(strip_settings(Tuning{{"sides_first", 1}}).sides_first);
    const StripSettings all =
        strip_settings(Tuning{{"band_rows", 5}, {"sides_first", 0}, {"dp4a", 0}, {"head", 0}});
    CHECK(all.band_rows == 5);
    CHECK_FALSE(all.sides_first);
    CHECK_FALSE(all.dp4a);
    REQUIRE(all.head.has_value());
    CHECK(all.head->count == 0);

    // A head needs all three, its low height up to its high one.
    CHECK_THROWS_AS(strip_settings(Tuning{{"head_low", 1}}), std::invalid_argument);
    CHECK_THROWS_AS(strip_settings(Tuning{{"head_low", 1}, {"head_group", 2}}),
                    std::invalid_argument);
    CHECK_THROWS_AS(strip_settings(Tuning{{"head_high", 3}, {"head_group", 2}}),
                    std::invalid_argument);
    CHECK_THROWS_AS(strip_settings(Tuning{{"head_low", 1}, {"head_high", 3}}),
                    std::invalid_argument);
    CHECK_THROWS_AS(strip_settings(Tuning{{"head_low", 3}, {"head_high", 1}, {"head_group", 2}}),
                    std::invalid_argument);
}

// The values strips_tuning_params() allows, which bench --param checks
// before a run: a value out of range, or not a number, is refused rather
// than left to the rule.
TEST_CASE("fast's strip path: the ranges of its tuning values", "[strips]") {
    const std::vector<TuningParam> params = strips_tuning_params();
    for (const char* name :
         {"band_rows", "head", "head_low", "head_high", "head_group", "sides_first", "dp4a"}) {
        INFO(name);
        CHECK(std::any_of(params.begin(), params.end(),
                          [&](const TuningParam& p) { return p.name == name; }));
    }
    auto refusal = [&](const Tuning& tuning) {
        return tuning_refusal(tuning, params, "fast.strips");
    };
    CHECK(refusal(Tuning{{"band_rows", 1},
                         {"head_low", 1},
                         {"head_high", 4096},
                         {"head_group", 4096},
                         {"sides_first", 1},
                         {"dp4a", 0},
                         {"head", 0}})
              .empty());
    for (const Tuning& bad :
         {Tuning{{"band_rows", 0}}, Tuning{{"band_rows", 4097}}, Tuning{{"head", 1}},
          Tuning{{"head_low", 0}}, Tuning{{"head_high", 5000}}, Tuning{{"head_group", 0}},
          Tuning{{"sides_first", 2}}, Tuning{{"dp4a", -1}}, Tuning{{"strip_rows", 16}}}) {
        INFO(bad.values().begin()->first << "=" << bad.values().begin()->second);
        CHECK_FALSE(refusal(bad).empty());
    }
    for (const char* text : {"head_low=1,3,2", "head=abc", "band_rows="}) {
        INFO(text);
        CHECK_THROWS_AS(parse_tuning_param(text), std::invalid_argument);
    }
}

namespace {

DeviceJob rgb_u8(int side) {
    DeviceJob job;
    job.src_width = job.dst_width = 4000;
    job.src_height = job.dst_height = 3000;
    job.channels = job.filtered_channels = 3;
    job.in_depth = job.out_depth = Depth::u8;
    job.filter_width = job.filter_height = side;
    job.origin_x = job.origin_y = -(side / 2);
    job.border = BorderMode::reflect101;
    return job;
}

}  // namespace

// The jobs fast.strips can run (by name, or when fast picks it): 3x3, 5x5
// and 7x7 centred, u8 and f32 on 1, 3 or 4 channels, every border but
// valid, a u8 image's constant border a whole u8.
TEST_CASE("fast's strip path: the jobs it can run", "[strips]") {
    for (int side : {3, 5, 7}) {
        INFO(side);
        CHECK(strips_refusal(rgb_u8(side)) == "");
        DeviceJob f32 = rgb_u8(side);
        f32.in_depth = f32.out_depth = Depth::f32;
        CHECK(strips_refusal(f32) == "");
        for (int channels : {1, 4}) {
            DeviceJob job = rgb_u8(side);
            job.channels = job.filtered_channels = channels;
            CHECK(strips_refusal(job) == "");
        }
    }
    CHECK_FALSE(strips_refusal(rgb_u8(9)).empty());
    CHECK_FALSE(strips_refusal(rgb_u8(1)).empty());
    DeviceJob wide = rgb_u8(3);
    wide.filter_width = 5;
    CHECK_FALSE(strips_refusal(wide).empty());
    DeviceJob off_centre = rgb_u8(3);
    off_centre.origin_x = 0;
    CHECK_FALSE(strips_refusal(off_centre).empty());
    DeviceJob valid = rgb_u8(3);
    valid.border = BorderMode::valid;
    CHECK_FALSE(strips_refusal(valid).empty());
    DeviceJob u16 = rgb_u8(3);
    u16.in_depth = Depth::u16;
    CHECK_FALSE(strips_refusal(u16).empty());
    DeviceJob two = rgb_u8(3);
    two.channels = two.filtered_channels = 2;
    CHECK_FALSE(strips_refusal(two).empty());
    DeviceJob constant = rgb_u8(3);
    constant.border = BorderMode::constant;
    constant.border_value = 255.0f;
    CHECK(strips_refusal(constant) == "");
    constant.border_value = 17.5f;
    CHECK_FALSE(strips_refusal(constant).empty());
    constant.in_depth = Depth::f32;  // f32 holds any value
    CHECK(strips_refusal(constant) == "");
}

}  // namespace cudaconv::test
