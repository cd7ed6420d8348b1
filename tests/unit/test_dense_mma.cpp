// fast's tensor-core path (kernels/fast/dense_mma.cu), its host side: the TF32
// rounding, the tap table (checked by summing the banded products it
// describes against a direct correlation), which jobs it can run (fast.mma
// by name) and which fast gives it. The GPU tests compare its outputs with
// cpu-ref. No device needed.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/tuning.hpp"
#include "kernels/fast/dense_mma.hpp"
#include "kernels/fast/fast_tiles.hpp"
#include "support/random_image.hpp"

namespace cudaconv::test {
namespace {

std::uint32_t bits_of(float v) {
    std::uint32_t b;
    std::memcpy(&b, &v, sizeof b);
    return b;
}

// A gray f32 4000x3000 job under `filter`, centred, reflect101.
Job gray_f32(const Filter& filter) {
    Job job;
    job.params = centred_params(filter);
    job.src.width = job.dst.width = 4000;
    job.src.height = job.dst.height = 3000;
    job.src.channels = job.dst.channels = 1;
    job.src.depth = job.dst.depth = Depth::f32;
    return job;
}

}  // namespace

TEST_CASE("tf32_round: 10 mantissa bits, to nearest, ties away from zero", "[dense-mma]") {
    CHECK(tf32_round(1.0f) == 1.0f);
    CHECK(tf32_round(0.0f) == 0.0f);
    // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: away from zero.
    CHECK(tf32_round(1.0f + 0x1p-11f) == 1.0f + 0x1p-10f);
    CHECK(tf32_round(-1.0f - 0x1p-11f) == -1.0f - 0x1p-10f);
    CHECK(tf32_round(1.0f + 0x1p-12f) == 1.0f);
    CHECK(tf32_round(1.0f + 0x1p-11f + 0x1p-20f) == 1.0f + 0x1p-10f);
    // The mantissa's top bits carry into the exponent.
    CHECK(tf32_round(2.0f - 0x1p-12f) == 2.0f);

    std::mt19937 gen(7);
    std::uniform_real_distribution<float> mantissa(-2.0f, 2.0f);
    std::uniform_int_distribution<int> exponent(-100, 100);
    for (int n = 0; n < 10000; ++n) {
        const float v = std::ldexp(mantissa(gen), exponent(gen));
        const float hi = tf32_round(v);
        INFO(v);
        CHECK((bits_of(hi) & 0x1fffu) == 0);
        CHECK(std::abs(static_cast<double>(hi) - v) <= std::ldexp(std::abs(v), -11));
        // hi + lo carries v to 2^-22 of itself.
        const float lo = tf32_round(v - hi);
        CHECK((bits_of(lo) & 0x1fffu) == 0);
        CHECK(std::abs(static_cast<double>(hi) + lo - v) <= std::ldexp(std::abs(v), -21));
    }
}

// The kernel's sum, in doubles: output (m, n) of block w (columns 8 w ...
// 8 w + 7) is, over filter rows i and block offsets d, staged (m + i,
// 8 (w + d) + k) times T(i, d)[k][n] = table row i at kDenseTapPad +
// 8 d + k - n (hi + lo). It must equal the correlation with the taps.
TEST_CASE("the tap table describes the filter's banded products", "[dense-mma]") {
    for (const auto& [w, h] : std::vector<std::pair<int, int>>{{1, 1},
                                                               {2, 3},
                                                               {3, 3},
                                                               {7, 7},
                                                               {8, 2},
                                                               {9, 9},
                                                               {15, 15},
                                                               {16, 5},
                                                               {17, 17},
                                                               {24, 31},
                                                               {25, 3},
                                                               {31, 31},
                                                               {33, 33},
                                                               {33, 1},
                                                               {1, 33}}) {
        INFO("filter " << w << "x" << h);
        const Filter f = random_filter(w, h, static_cast<std::uint64_t>(100 * w + h));
        const std::vector<float> table = dense_mma_tap_table(f.taps, w, h);
        const int blocks = dense_mma_blocks(w);
        const int stride = dense_mma_tap_stride(blocks);
        REQUIRE(table.size() == 4 * static_cast<std::size_t>(h) * stride);
        // The blocks are just enough: 8 outputs and w - 1 more columns.
        CHECK(8 * blocks >= 8 + w - 1);
        CHECK(8 * (blocks - 1) < 8 + w - 1);

        constexpr int kGroups = 4;
        const int rows = 16 + h - 1;
        const int columns = 8 * (kGroups + blocks - 1);
        std::mt19937 gen(static_cast<unsigned>(w * h));
        std::uniform_real_distribution<double> sample(-1000.0, 1000.0);
        std::vector<double> staged(static_cast<std::size_t>(rows) * columns);
        for (double& v : staged) v = sample(gen);
        auto at = [&](int r, int c) { return staged[static_cast<std::size_t>(r) * columns + c]; };
        // The T value lane (g, t) holds at k (t or t + 4), n = g: from the
        // entry of u = 8 d + t - g, its first pair for k = t, its second
        // for k = t + 4. Every k, n of every block is some lane's.
        auto tap = [&](int i, int d, int k, int n) {
            const int u = 8 * d + (k & 3) - n;
            const int e = u + kDenseTapPad;
            if (e < 0 || e >= stride) FAIL("entry " << e << " outside the table's row");
            const float* entry = &table[4 * (static_cast<std::size_t>(i) * stride + e)];
            return k < 4 ? static_cast<double>(entry[0]) + entry[2]
                         : static_cast<double>(entry[1]) + entry[3];
        };
        double worst = 0.0;
        for (int group = 0; group < kGroups; ++group) {
            for (int m = 0; m < 16; ++m) {
                for (int n = 0; n < 8; ++n) {
                    double banded = 0.0;
                    for (int i = 0; i < h; ++i) {
                        for (int d = 0; d < blocks; ++d) {
                            for (int k = 0; k < 8; ++k) {
                                banded += at(m + i, 8 * (group + d) + k) * tap(i, d, k, n);
                            }
                        }
                    }
                    double direct = 0.0, magnitude = 0.0;
                    for (int i = 0; i < h; ++i) {
                        for (int j = 0; j < w; ++j) {
                            const double term = at(m + i, 8 * group + n + j) * f.at(j, i);
                            direct += term;
                            magnitude += std::abs(term);
                        }
                    }
                    worst = std::max(worst, std::abs(banded - direct) / magnitude);
                }
            }
        }
        // The taps as float, split in two TF32 parts: about 2^-22 of each.
        CHECK(worst < 1e-6);
    }
}

TEST_CASE("the tap table: zeros past the filter, in both parts", "[dense-mma]") {
    const Filter f = random_filter(5, 2, 3);
    const std::vector<float> table = dense_mma_tap_table(f.taps, 5, 2);
    const int stride = dense_mma_tap_stride(dense_mma_blocks(5));
    for (int i = 0; i < 2; ++i) {
        for (int e = 0; e < stride; ++e) {
            const float* entry = &table[4 * (static_cast<std::size_t>(i) * stride + e)];
            for (int k : {0, 4}) {
                const int j = e - kDenseTapPad + k;
                INFO("row " << i << ", tap " << j);
                const float hi = entry[k / 4];
                const float lo = entry[2 + k / 4];
                if (j < 0 || j >= 5) {
                    CHECK(hi == 0.0f);
                    CHECK(lo == 0.0f);
                } else {
                    CHECK(hi == tf32_round(static_cast<float>(f.at(j, i))));
                    const double tap = static_cast<float>(f.at(j, i));
                    CHECK(std::abs(static_cast<double>(hi) + lo - tap) <=
                          std::ldexp(std::abs(tap), -21));
                }
            }
        }
    }
}

TEST_CASE("the tensor-core path's jobs: any shape to 33x33, taps and borders it can split",
          "[dense-mma]") {
    CHECK(dense_mma_refusal(gray_f32(random_filter(31, 31, 1))).empty());
    CHECK(dense_mma_refusal(gray_f32(random_filter(33, 1, 1))).empty());
    CHECK(dense_mma_refusal(gray_f32(random_filter(2, 33, 1))).empty());
    CHECK(dense_mma_refusal(gray_f32(random_filter(34, 3, 1))) ==
          "fast runs filters up to 33x33; this one is 34x3");
    CHECK(!dense_mma_refusal(gray_f32(random_filter(3, 35, 1))).empty());

    for (Depth depth : {Depth::u8, Depth::u16}) {
        Job job = gray_f32(random_filter(9, 9, 2));
        job.src.depth = depth;
        CHECK(dense_mma_refusal(job).empty());
    }
    for (int channels : {2, 3, 4}) {
        Job job = gray_f32(random_filter(9, 9, 2));
        job.src.channels = job.dst.channels = channels;
        CHECK(dense_mma_refusal(job).empty());
    }
    Job five = gray_f32(random_filter(9, 9, 2));
    five.src.channels = five.dst.channels = 5;
    CHECK(dense_mma_refusal(five) == "fast runs 1 to 4 channels; this image has 5");

    // Taps and constant border values whose TF32 parts could overflow.
    Job huge_tap = gray_f32(random_filter(9, 9, 2));
    huge_tap.params.filter.taps[40] = 1e38;
    CHECK(dense_mma_refusal(huge_tap) == "fast's tensor cores take taps under 2^126 in magnitude");
    Job border = gray_f32(random_filter(9, 9, 2));
    border.params.border = BorderMode::constant;
    border.params.border_value = 1e38;
    CHECK(!dense_mma_refusal(border).empty());
    border.params.border_value = -std::numeric_limits<double>::infinity();
    CHECK(!dense_mma_refusal(border).empty());
    border.params.border_value = 0.5;
    CHECK(dense_mma_refusal(border).empty());
    // Only a constant border reads the value.
    border.params.border = BorderMode::wrap;
    border.params.border_value = 1e38;
    CHECK(dense_mma_refusal(border).empty());
}

TEST_CASE("the tensor-core path: the measured crossover, and fast.mma by name", "[dense-mma]") {
    // 4000x3000 gray f32, as gray_f32 makes them.
    const Job f32_11 = gray_f32(random_filter(11, 11, 1));
    const Job f32_13 = gray_f32(random_filter(13, 13, 1));
    const Job f32_15 = gray_f32(random_filter(15, 15, 1));
    auto as_u8 = [](Job job, int channels) {
        job.src.depth = Depth::u8;
        job.src.channels = channels;
        return job;
    };
    auto sized = [](Job job, int width, int height) {
        job.src.width = job.dst.width = width;
        job.src.height = job.dst.height = height;
        return job;
    };
    // f32, gray or colour, and gray u8: the tile path at every side it
    // runs.
    CHECK_FALSE(dense_mma_preferred(f32_11, true));
    CHECK_FALSE(dense_mma_preferred(f32_13, true));
    CHECK_FALSE(dense_mma_preferred(f32_15, true));
    Job rgb_f32 = f32_15;
    rgb_f32.src.channels = 3;
    CHECK_FALSE(dense_mma_preferred(rgb_f32, true));
    CHECK_FALSE(dense_mma_preferred(as_u8(f32_13, 1), true));
    CHECK_FALSE(dense_mma_preferred(as_u8(f32_15, 1), true));
    // Colour u8: at 15x15 only, on images of 4 megapixels and more.
    CHECK_FALSE(dense_mma_preferred(as_u8(f32_11, 3), true));
    CHECK_FALSE(dense_mma_preferred(as_u8(f32_13, 3), true));
    CHECK(dense_mma_preferred(as_u8(f32_15, 3), true));
    CHECK_FALSE(dense_mma_preferred(as_u8(f32_13, 4), true));
    CHECK(dense_mma_preferred(as_u8(f32_15, 4), true));
    CHECK(dense_mma_preferred(sized(as_u8(f32_15, 3), 3000, 2000), true));
    CHECK(dense_mma_preferred(sized(as_u8(f32_15, 3), 2000, 2000), true));
    CHECK_FALSE(dense_mma_preferred(sized(as_u8(f32_15, 3), 2000, 1999), true));
    CHECK_FALSE(dense_mma_preferred(sized(as_u8(f32_15, 4), 780, 585), true));
    // The strip path's sizes never go.
    CHECK_FALSE(dense_mma_preferred(as_u8(gray_f32(random_filter(7, 7, 1)), 3), true));
    // Jobs fast's CUDA-core paths cannot run always go.
    CHECK(dense_mma_preferred(f32_11, false));
    CHECK(dense_mma_preferred(f32_13, false));
    // Asked for by name, fast.mma runs the jobs fast gives the CUDA-core
    // paths, and fast.tiles those fast gives the tensor cores where the
    // tiles can run them.
    CHECK(dense_mma_refusal(f32_11).empty());
    CHECK(dense_mma_refusal(f32_13).empty());
    CHECK(dense_mma_refusal(as_u8(gray_f32(random_filter(3, 3, 1)), 1)).empty());
    CHECK(tiles_refusal(as_u8(f32_15, 3)).empty());
    CHECK(tiles_refusal(as_u8(f32_15, 4)).empty());
    CHECK_FALSE(tiles_refusal(gray_f32(random_filter(17, 17, 1))).empty());
    const std::vector<TuningParam> params = dense_mma_tuning_params();
    REQUIRE(params.size() == 1);
    CHECK(params[0].name == "max_blocks");
    CHECK(tuning_refusal(Tuning{{"max_blocks", 1}}, params, "fast.mma").empty());
    CHECK_FALSE(tuning_refusal(Tuning{{"max_blocks", 0}}, params, "fast.mma").empty());
}

}  // namespace cudaconv::test
