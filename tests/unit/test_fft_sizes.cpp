// The host arithmetic of the fft variant: fast transform sizes against a
// brute-force search, the padded shape's exactness condition, and the
// error bound's form. No device needed.
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include <catch2/catch.hpp>

#include "core/fft_sizes.hpp"

namespace {

using cudaconv::FftShape;

bool is_7_smooth(std::int64_t m) {
    for (std::int64_t p : {2, 3, 5, 7}) {
        while (m % p == 0) m /= p;
    }
    return m == 1;
}

std::int64_t brute_next_fast(std::int64_t n) {
    std::int64_t m = std::max<std::int64_t>(n, 1);
    while (!is_7_smooth(m)) ++m;
    return m;
}

}  // namespace

TEST_CASE("next_fast_fft_size equals a brute-force search", "[fft]") {
    for (std::int64_t n = -3; n <= 5000; ++n) {
        INFO("n = " << n);
        REQUIRE(cudaconv::next_fast_fft_size(n) == brute_next_fast(n));
    }
}

TEST_CASE("next_fast_fft_size on known and large values", "[fft]") {
    CHECK(cudaconv::next_fast_fft_size(0) == 1);
    CHECK(cudaconv::next_fast_fft_size(1) == 1);
    CHECK(cudaconv::next_fast_fft_size(11) == 12);
    CHECK(cudaconv::next_fast_fft_size(13) == 14);
    CHECK(cudaconv::next_fast_fft_size(17) == 18);
    CHECK(cudaconv::next_fast_fft_size(97) == 98);
    CHECK(cudaconv::next_fast_fft_size(1021) == 1024);
    CHECK(cudaconv::next_fast_fft_size(4001) == 4032);  // 2^6 3^2 7
    CHECK(cudaconv::next_fast_fft_size(1000001) == brute_next_fast(1000001));
    const std::int64_t max = cudaconv::kMaxFastFftInput;
    CHECK(cudaconv::next_fast_fft_size(max) == max);
    CHECK(cudaconv::next_fast_fft_size(max - 1) == brute_next_fast(max - 1));
    CHECK_THROWS_AS(cudaconv::next_fast_fft_size(max + 1), std::out_of_range);
}

TEST_CASE("next_fast_fft_size results are 7-smooth and not far above n", "[fft]") {
    for (std::int64_t n = 5001; n < 20'000'000; n = n * 3 / 2 + 7) {
        const std::int64_t m = cudaconv::next_fast_fft_size(n);
        INFO("n = " << n << ", m = " << m);
        CHECK(m >= n);
        CHECK(is_7_smooth(m));
        CHECK(m < n + n / 8);  // 7-smooth numbers are dense at these sizes
    }
}

TEST_CASE("next_fast_even_fft_size is the smallest even 7-smooth size", "[fft]") {
    for (std::int64_t n = -1; n <= 3000; ++n) {
        std::int64_t m = std::max<std::int64_t>(n, 2);
        while (m % 2 != 0 || !is_7_smooth(m)) ++m;
        INFO("n = " << n);
        REQUIRE(cudaconv::next_fast_even_fft_size(n) == m);
    }
}

TEST_CASE("fft_shape covers the read window with room to never wrap", "[fft]") {
    struct Case {
        std::int64_t w, h;
        int fw, fh;
    };
    const std::vector<Case> cases{{1, 1, 1, 1},   {1, 37, 3, 3},    {41, 1, 1, 5},
                                  {13, 7, 45, 2}, {257, 9, 31, 31}, {4000, 3000, 17, 17}};
    for (const Case& c : cases) {
        const FftShape s = cudaconv::fft_shape(c.w, c.h, c.fw, c.fh);
        INFO(c.w << "x" << c.h << " filter " << c.fw << "x" << c.fh);
        CHECK(s.used_width == c.w + c.fw - 1);
        CHECK(s.used_height == c.h + c.fh - 1);
        // Output x < w reads x + i <= w + fw - 2 < used_width <= padded_width.
        CHECK(s.padded_width >= s.used_width);
        CHECK(s.padded_height >= s.used_height);
        CHECK(s.padded_width % 2 == 0);
        CHECK(s.padded_height >= 2);
        CHECK(is_7_smooth(s.padded_width));
        CHECK(is_7_smooth(s.padded_height));
        CHECK(s.spectrum_width() == s.padded_width / 2 + 1);
        CHECK(s.plane() == s.padded_width * s.padded_height);
        CHECK(s.spectrum_plane() == s.spectrum_width() * s.padded_height);
    }
}

TEST_CASE("fft_error_bound grows with log size, taps and samples", "[fft]") {
    const FftShape small = cudaconv::fft_shape(62, 62, 3, 3);      // 64 x 64
    const FftShape large = cudaconv::fft_shape(4094, 4094, 3, 3);  // 4096 x 4096
    const double b_small = cudaconv::fft_error_bound(small, 1.0, 255.0);
    const double b_large = cudaconv::fft_error_bound(large, 1.0, 255.0);
    CHECK(b_small > 0.0);
    CHECK(b_large > b_small);
    CHECK(b_large / b_small == Approx((24.0 + 2.0) / (12.0 + 2.0)));
    CHECK(cudaconv::fft_error_bound(small, 2.0, 255.0) == Approx(2.0 * b_small));
    CHECK(cudaconv::fft_error_bound(small, 1.0, 510.0) == Approx(2.0 * b_small));
    CHECK(cudaconv::fft_error_bound(small, 0.0, 255.0) == 0.0);
    // An 8-bit image under a normalised filter stays far below half a level.
    CHECK(b_large < 0.05);
}
