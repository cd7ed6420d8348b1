// fast-separable's tensor-core path (kernels/fast_separable/separable_mma.cu), its host
// side: which jobs it takes (the GPU tests run it by name,
// fast-separable.mma, and compare its outputs with cpu-ref), and the taps'
// scaling and fragments, decoded here from the PTX
// ISA's mma.m16n8k16 layouts independently of how they were built. No
// device needed.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "filters/gaussian.hpp"
#include "filters/named.hpp"
#include "filters/rank1.hpp"
#include "kernels/fast_separable/separable_mma.hpp"

namespace cudaconv::test {
namespace {

struct MmaCase {
    Job job;
    DeviceJob device;
};

// A 4000x3000 RGB u8 image under `filter`, centred, reflect101.
MmaCase rgb_u8(const Filter& filter) {
    MmaCase c;
    c.job.params = centred_params(filter);
    DeviceJob& d = c.device;
    d.src_width = d.dst_width = 4000;
    d.src_height = d.dst_height = 3000;
    d.channels = d.filtered_channels = 3;
    d.in_depth = d.out_depth = Depth::u8;
    d.filter_width = filter.width;
    d.filter_height = filter.height;
    d.origin_x = -(filter.width / 2);
    d.origin_y = -(filter.height / 2);
    return c;
}

bool takes(const MmaCase& c) { return mma_take(c.job, c.device); }

}  // namespace

TEST_CASE("tensor-core path: the jobs it takes", "[separable-mma]") {
    const Filter sigma5 = gaussian_filter(31, 5.0);
    CHECK(takes(rgb_u8(sigma5)));
    CHECK(takes(rgb_u8(gaussian_filter(3, 0.0))));
    CHECK(takes(rgb_u8(*make_named_filter("sobel-x"))));
    // Sides up to 33 (three blocks of 16 taps a pass).
    CHECK(takes(rgb_u8(gaussian_filter(33, 0.0))));
    CHECK_FALSE(takes(rgb_u8(gaussian_filter(35, 0.0))));

    MmaCase gray = rgb_u8(sigma5);
    gray.device.channels = gray.device.filtered_channels = 1;
    CHECK(takes(gray));
    MmaCase alpha = rgb_u8(sigma5);
    alpha.device.channels = 4;
    CHECK(takes(alpha));

    // Only u8 samples are exact in fp16.
    for (Depth in : {Depth::u16, Depth::f32}) {
        MmaCase c = rgb_u8(sigma5);
        c.device.in_depth = in;
        CHECK_FALSE(takes(c));
    }
    // A constant border must be a whole u8 too.
    MmaCase border = rgb_u8(sigma5);
    border.device.border = BorderMode::constant;
    border.device.border_value = 17.0f;
    CHECK(takes(border));
    border.device.border_value = 17.5f;
    CHECK_FALSE(takes(border));
    border.device.border_value = 256.0f;
    CHECK_FALSE(takes(border));

    MmaCase valid = rgb_u8(sigma5);
    valid.device.border = BorderMode::valid;
    CHECK_FALSE(takes(valid));
    MmaCase off_centre = rgb_u8(sigma5);
    off_centre.device.origin_x = 0;
    CHECK_FALSE(takes(off_centre));
    // Not rank 1.
    CHECK_FALSE(takes(rgb_u8(*make_named_filter("emboss"))));
}

// No setting turns the tensor-core path on or off any more: mma_take is the
// path's own limits, which fast-separable follows for every job, and
// fast-separable.strips runs the jobs by name on the CUDA cores (the GPU
// tests run both paths by name).
TEST_CASE("tensor-core path: its limits alone decide", "[separable-mma]") {
    const MmaCase small = rgb_u8(gaussian_filter(3, 0.0));
    const MmaCase large = rgb_u8(gaussian_filter(31, 5.0));
    CHECK(takes(small));
    CHECK(takes(large));
    MmaCase f32 = large;
    f32.device.in_depth = Depth::f32;
    CHECK_FALSE(takes(f32));
}

namespace {

// An IEEE half's value from its bits.
double half_value(std::uint16_t bits) {
    const int exponent = (bits >> 10) & 0x1f;
    const int mantissa = bits & 0x3ff;
    double v = 0.0;
    if (exponent == 0) {
        v = std::ldexp(mantissa, -24);
    } else if (exponent == 31) {
        v = mantissa != 0 ? std::nan("") : INFINITY;
    } else {
        v = std::ldexp(1024 + mantissa, exponent - 25);
    }
    return (bits & 0x8000) ? -v : v;
}

// The value a fragment word's two halves hold: (lower, upper).
std::pair<double, double> halves_of(std::uint32_t word) {
    return {half_value(static_cast<std::uint16_t>(word & 0xffff)),
            half_value(static_cast<std::uint16_t>(word >> 16))};
}

// hi + lo carries a tap to 2^-22 of itself, or to fp16's subnormal step.
void check_tap(double held, double tap, const char* what, int j, int a, int b) {
    INFO(what << " block " << j << " (" << a << ", " << b << "): " << held << " against " << tap);
    if (tap == 0.0) {
        CHECK(held == 0.0);
    } else {
        CHECK(std::abs(held - tap) <= std::ldexp(std::abs(tap), -21) + std::ldexp(1.0, -24));
    }
}

// Block j of a band matrix from the A fragments at `word(j, part, reg)`:
// 16 m by 16 k. A register r of lane 4g + t holds row g + 8 (r & 1),
// columns 2t + 8 (r >> 1) and the next; the hi and lo parts add up.
template <typename Word>
void decode_block(const std::vector<std::uint32_t>& words, Word word, int j,
                  double (&block)[16][16]) {
    for (auto& row : block) {
        for (double& v : row) v = 0.0;
    }
    for (int lane = 0; lane < 32; ++lane) {
        for (int part = 0; part < 2; ++part) {
            for (int reg = 0; reg < 4; ++reg) {
                const auto [first, second] = halves_of(words[word(j, part, reg) * 32 + lane]);
                const int m = (lane >> 2) + 8 * (reg & 1);
                const int k = 2 * (lane & 3) + 8 * (reg >> 1);
                block[m][k] += first;
                block[m][k + 1] += second;
            }
        }
    }
}

void check_fragments(const Rank1Filter& f) {
    const int side = static_cast<int>(f.row.size());
    INFO("side " << side);
    const MmaTapScales s = mma_tap_scales(f);
    double column_sum = 0.0;
    for (double v : f.column) column_sum += std::abs(v);
    double row_max = 0.0;
    for (double v : f.row) row_max = std::max(row_max, std::abs(v));
    // The intermediate (the column pass's sums) fits fp16 with room to
    // spare, but not needlessly small.
    const double largest_intermediate = 255.0 * std::ldexp(column_sum, s.column_exp);
    CHECK(largest_intermediate <= 32768.0);
    CHECK(largest_intermediate > 16384.0);
    const double largest_row = std::ldexp(row_max, s.row_exp);
    CHECK(largest_row >= 1024.0);
    CHECK(largest_row < 2048.0);

    const std::vector<std::uint32_t> words = mma_fragments(f, s);
    REQUIRE(words.size() == static_cast<std::size_t>(2 * kMmaPassWords * 32));
    auto scaled = [side](const std::vector<double>& taps, int exp, int i) {
        return (i >= 0 && i < side) ? std::ldexp(taps[static_cast<std::size_t>(i)], exp) : 0.0;
    };
    // Every output meets every tap in the blocks its side multiplies: rows
    // m of G from staged row m on, pixels m of T from the first tile's
    // columns on (the row taps shifted to match).
    const int blocks = mma_blocks_k(side);
    for (int m = 0; m < 16; ++m) {
        std::vector<int> column_hits(static_cast<std::size_t>(side), 0);
        std::vector<int> row_hits(static_cast<std::size_t>(side), 0);
        for (int j = 0; j < blocks; ++j) {
            for (int k = 0; k < 16; ++k) {
                const int i = 16 * j + k - m;
                if (i >= 0 && i < side) ++column_hits[static_cast<std::size_t>(i)];
                const int shifted = i + mma_row_shift(side);
                if (shifted >= 0 && shifted < side) ++row_hits[static_cast<std::size_t>(shifted)];
            }
        }
        INFO("output " << m);
        CHECK(std::all_of(column_hits.begin(), column_hits.end(), [](int n) { return n == 1; }));
        CHECK(std::all_of(row_hits.begin(), row_hits.end(), [](int n) { return n == 1; }));
    }
    for (int j = 0; j < 3; ++j) {
        double g_block[16][16];
        decode_block(words, mma_column_word, j, g_block);
        double t_block[16][16];
        decode_block(words, mma_row_word, j, t_block);
        for (int m = 0; m < 16; ++m) {
            for (int k = 0; k < 16; ++k) {
                check_tap(g_block[m][k], scaled(f.column, s.column_exp, 16 * j + k - m), "G", j, m,
                          k);
                check_tap(t_block[m][k],
                          scaled(f.row, s.row_exp, 16 * j + k - m + mma_row_shift(side)), "T", j, m,
                          k);
            }
        }
    }
}

}  // namespace

TEST_CASE("tensor-core path: the taps' fragments hold the band matrices T and G",
          "[separable-mma]") {
    // Random signed taps over six decades, every odd side the path takes.
    std::mt19937_64 gen(2026);
    std::uniform_real_distribution<double> value(-1.0, 1.0);
    std::uniform_int_distribution<int> decade(0, 6);
    for (int side = 1; side <= 33; side += 2) {
        Rank1Filter f;
        for (int i = 0; i < side; ++i) {
            f.row.push_back(value(gen) * std::pow(10.0, -decade(gen)));
            f.column.push_back(value(gen) * std::pow(10.0, -decade(gen)));
        }
        check_fragments(f);
    }
    // The filters it is for: a 31-tap Gaussian, a Sobel, a box.
    for (const char* name : {"gaussian:sigma=5", "sobel-x", "box:17"}) {
        INFO(name);
        const auto factors = separate(*make_named_filter(name));
        REQUIRE(factors);
        check_fragments(*factors);
    }
}

}  // namespace cudaconv::test
