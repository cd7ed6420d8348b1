// fast's strip path (kernels/fast_strips.cu), its host side: which filters
// take the integer (DP4A) path and the tap words it gives the device,
// decoded here byte by byte. The GPU tests compare the path's outputs with
// cpu-ref; these need no device.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "filters/named.hpp"
#include "kernels/fast/fast_strips.hpp"
#include "support/scoped_env.hpp"

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

TEST_CASE("fast's integer path: random integer taps of every side, to the ends of s8",
          "[strips]") {
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

TEST_CASE("fast's integer path: CUDACONV_FAST_STRIPS_DP4A=0 turns it off", "[strips]") {
    {
        const ScopedEnv unset("CUDACONV_FAST_STRIPS_DP4A", nullptr);
        CHECK(strips_dp4a_enabled());
    }
    const ScopedEnv off("CUDACONV_FAST_STRIPS_DP4A", "0");
    CHECK_FALSE(strips_dp4a_enabled());
}

// The band heights measured best on an H100 (kernels/fast_strips.cu,
// docs/PERFORMANCE.md), for 4000x3000 images: `across` is the bands side by
// side, a warp's output width apart (30 lanes of 16 bytes; of 8 bytes for
// u8 under 5x5 and 7x7).
TEST_CASE("fast's strip path: band heights as measured", "[strips]") {
    const ScopedEnv unset("CUDACONV_STRIPS_ROWS", nullptr);
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
    const ScopedEnv rows("CUDACONV_STRIPS_ROWS", "6");
    CHECK(strips_band_rows(34, 3000, 3, true) == 6);
}

// The head of rising bands (StripHead): rows of bands that tile the top of
// the image with no gap or overlap, only where it was measured faster
// (kernels/fast_strips.cu), and off under CUDACONV_STRIPS_HEAD=0.
TEST_CASE("fast's strip path: the head's bands as measured", "[strips]") {
    const ScopedEnv unset("CUDACONV_STRIPS_HEAD", nullptr);
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
    CHECK(strips_head(1000, 100, 3, 8, false, 2640).count == 0);
    {
        const ScopedEnv set("CUDACONV_STRIPS_HEAD", "1,20,6");
        const StripHead swept = strips_head(25, 3000, 3, 8, true, 2640);
        CHECK(swept.count == 20 * 6);
        CHECK(swept.height(0) == 1);
        CHECK(swept.height(swept.count - 1) == 20);
    }
    // Values that are not three whole numbers in range leave the rule.
    for (const char* text : {"1,3,2xyz", "1,3", "0,3,2", "3,1,2", "1,5000,2", "1,3,0", "abc"}) {
        const ScopedEnv set("CUDACONV_STRIPS_HEAD", text);
        CAPTURE(text);
        CHECK(strips_head(25, 3000, 3, 8, false, 2640).group == 5);
        CHECK(strips_head(25, 3000, 3, 8, true, 2640).count == 0);
    }
    const ScopedEnv off("CUDACONV_STRIPS_HEAD", "0");
    CHECK(strips_head(25, 3000, 3, 8, false, 2640).count == 0);
}

}  // namespace cudaconv::test
