// filters/rank1: which filters are an outer product of a column and a row,
// and factors that rebuild them. Random outer products (with zeros in
// either factor) must come back within the tolerance, random dense filters
// must not, and the named filters docs/SPEC.md calls separable must be.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "filters/rank1.hpp"
#include "filters/spec.hpp"

namespace {

using cudaconv::Filter;
using cudaconv::Rank1Filter;
using cudaconv::separate;

std::vector<double> random_taps(int n, std::mt19937_64& rng) {
    std::uniform_real_distribution<double> tap(-1.0, 1.0);
    std::vector<double> v(static_cast<std::size_t>(n));
    for (double& t : v) t = tap(rng);
    return v;
}

Filter outer_product(const std::vector<double>& column, const std::vector<double>& row) {
    Filter f;
    f.width = static_cast<int>(row.size());
    f.height = static_cast<int>(column.size());
    for (const double c : column) {
        for (const double r : row) f.taps.push_back(c * r);
    }
    return f;
}

double largest_magnitude(const std::vector<double>& v) {
    double m = 0.0;
    for (const double x : v) m = std::max(m, std::abs(x));
    return m;
}

// The factors have the filter's shape and rebuild every tap.
void check_rebuilds(const Filter& f, const Rank1Filter& r) {
    REQUIRE(r.row.size() == static_cast<std::size_t>(f.width));
    REQUIRE(r.column.size() == static_cast<std::size_t>(f.height));
    const double tolerance = cudaconv::kRank1RelativeTolerance * largest_magnitude(f.taps);
    for (int j = 0; j < f.height; ++j) {
        for (int i = 0; i < f.width; ++i) {
            CAPTURE(i, j);
            REQUIRE(std::abs(r.column[j] * r.row[i] - f.at(i, j)) <= tolerance);
        }
    }
}

}  // namespace

TEST_CASE("random outer products separate and rebuild", "[rank1]") {
    const int width = GENERATE(1, 2, 3, 5, 8, 17, 31);
    const int height = GENERATE(1, 2, 3, 7, 16);
    const std::uint64_t seed = 1000u + static_cast<std::uint64_t>(width * 100 + height);
    CAPTURE(width, height, seed);
    std::mt19937_64 rng(seed);
    const Filter f = outer_product(random_taps(height, rng), random_taps(width, rng));
    const auto r = separate(f);
    REQUIRE(r.has_value());
    check_rebuilds(f, *r);
    // Balanced by a power of two: neither factor dwarfs the other.
    const double ratio = largest_magnitude(r->row) / largest_magnitude(r->column);
    CHECK(ratio < 4.0);
    CHECK(ratio > 0.25);
}

TEST_CASE("outer products of very different scales separate", "[rank1]") {
    std::mt19937_64 rng(7);
    std::vector<double> row = random_taps(5, rng);
    std::vector<double> column = random_taps(4, rng);
    for (double& t : row) t *= 1e6;
    for (double& t : column) t *= 1e-8;
    const Filter f = outer_product(column, row);
    const auto r = separate(f);
    REQUIRE(r.has_value());
    check_rebuilds(f, *r);
}

TEST_CASE("random dense filters are not rank 1", "[rank1]") {
    const int width = GENERATE(2, 3, 5, 8, 31);
    const int height = GENERATE(2, 3, 4, 17);
    const std::uint64_t seed = 2000u + static_cast<std::uint64_t>(width * 100 + height);
    CAPTURE(width, height, seed);
    std::mt19937_64 rng(seed);
    Filter f;
    f.width = width;
    f.height = height;
    f.taps = random_taps(width * height, rng);
    CHECK_FALSE(separate(f).has_value());
}

TEST_CASE("a rank-1 filter with one tap off by more than the tolerance is rejected", "[rank1]") {
    std::mt19937_64 rng(11);
    Filter f = outer_product(random_taps(5, rng), random_taps(5, rng));
    const double largest = largest_magnitude(f.taps);
    // Well inside the tolerance: still rank 1.
    f.taps[7] += 0.01 * cudaconv::kRank1RelativeTolerance * largest;
    CHECK(separate(f).has_value());
    // Far outside it, yet far below what a float kernel could see.
    f.taps[7] += 1e-7 * largest;
    CHECK_FALSE(separate(f).has_value());
}

TEST_CASE("single rows, single columns and 1x1 always separate", "[rank1]") {
    const int n = GENERATE(1, 2, 3, 9, 1025);
    CAPTURE(n);
    std::mt19937_64 rng(static_cast<std::uint64_t>(3000 + n));
    const std::vector<double> taps = random_taps(n, rng);

    Filter one_row;
    one_row.width = n;
    one_row.height = 1;
    one_row.taps = taps;
    const auto r = separate(one_row);
    REQUIRE(r.has_value());
    check_rebuilds(one_row, *r);

    Filter one_column = one_row;
    std::swap(one_column.width, one_column.height);
    const auto c = separate(one_column);
    REQUIRE(c.has_value());
    check_rebuilds(one_column, *c);
}

TEST_CASE("zero rows and columns in either factor", "[rank1]") {
    std::mt19937_64 rng(17);
    std::vector<double> row = random_taps(6, rng);
    std::vector<double> column = random_taps(5, rng);
    SECTION("zeros inside the factors") {
        row[0] = 0.0;
        row[3] = 0.0;
        column[2] = 0.0;
        column[4] = 0.0;
    }
    SECTION("a single non-zero tap") {
        std::fill(row.begin(), row.end(), 0.0);
        std::fill(column.begin(), column.end(), 0.0);
        row[5] = -3.0;
        column[1] = 0.5;
    }
    const Filter f = outer_product(column, row);
    const auto r = separate(f);
    REQUIRE(r.has_value());
    check_rebuilds(f, *r);
}

TEST_CASE("a zero row beside a rank-2 block is not rank 1", "[rank1]") {
    Filter f;
    f.width = 3;
    f.height = 3;
    f.taps = {0, 0, 0,  //
              1, 2, 0,  //
              3, 1, 0};
    CHECK_FALSE(separate(f).has_value());
}

TEST_CASE("the all-zero filter is rank 0 and separates into zeros", "[rank1]") {
    Filter f;
    f.width = 4;
    f.height = 3;
    f.taps.assign(12, 0.0);
    const auto r = separate(f);
    REQUIRE(r.has_value());
    CHECK(r->row == std::vector<double>(4, 0.0));
    CHECK(r->column == std::vector<double>(3, 0.0));
}

TEST_CASE("named filters: smoothing and gradients are rank 1", "[rank1]") {
    const std::string separable = GENERATE(as<std::string>{}, "identity", "box:5", "box:3x2",
                                           "gaussian:5", "gaussian:7:2.5", "gaussian:sigma=3",
                                           "sobel-x", "sobel-y", "scharr-x", "scharr-y",
                                           "prewitt-x", "prewitt-y", "motion:9");
    CAPTURE(separable);
    const Filter f = cudaconv::parse_filter_spec(separable);
    const auto r = separate(f);
    REQUIRE(r.has_value());
    check_rebuilds(f, *r);
}

TEST_CASE("named filters: edge, laplacian and friends are not rank 1", "[rank1]") {
    const std::string dense =
        GENERATE(as<std::string>{}, "edge", "laplacian", "laplacian8", "sharpen", "emboss");
    CAPTURE(dense);
    CHECK_FALSE(separate(cudaconv::parse_filter_spec(dense)).has_value());
}

TEST_CASE("the gaussian factors are the 1-D gaussian up to a constant", "[rank1]") {
    const Filter f = cudaconv::parse_filter_spec("gaussian:5");
    const auto r = separate(f);
    REQUIRE(r.has_value());
    // Symmetric filter, so both factors are proportional to the same taps.
    for (int k = 0; k < 5; ++k) {
        CHECK(r->row[k] / r->row[2] == Approx(r->column[k] / r->column[2]).epsilon(1e-12));
    }
}
