// finish_row (the cpu variant's branch-free last step) gives exactly what
// saturate_to(finish_value(...)) gives, sample by sample: ties to even,
// clamps, NaN and infinities, negative zero, and row lengths that end part
// way through a vector.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/convert.hpp"
#include "cpu/finish_row.hpp"

namespace cudaconv {
namespace {

std::vector<float> awkward_sums() {
    const float inf = std::numeric_limits<float>::infinity();
    std::vector<float> v{0.0f,
                         -0.0f,
                         0.5f,
                         1.5f,
                         2.5f,
                         -0.5f,
                         -1.5f,
                         0.49999997f,
                         0.50000006f,
                         254.5f,
                         255.5f,
                         256.0f,
                         -1.0f,
                         65534.5f,
                         65535.5f,
                         65536.0f,
                         1e30f,
                         -1e30f,
                         inf,
                         -inf,
                         std::numeric_limits<float>::quiet_NaN(),
                         -std::numeric_limits<float>::quiet_NaN(),  // sign bit set, as inf - inf
                         127.49999f,
                         3.0f,
                         7.5f};
    std::mt19937 gen(7);
    std::uniform_real_distribution<float> any(-400.0f, 70000.0f);
    for (int i = 0; i < 200; ++i) v.push_back(any(gen));
    for (int i = -20; i < 300; ++i) v.push_back(static_cast<float>(i) + 0.5f);  // ties
    return v;
}

template <typename Out>
void check_against_saturate(double scale, double delta, bool take_abs) {
    const std::vector<float> sums = awkward_sums();
    // Every length up to 37 from every start, then the whole vector.
    for (std::size_t n :
         {std::size_t{1}, std::size_t{3}, std::size_t{17}, std::size_t{37}, sums.size()}) {
        for (std::size_t start = 0; start + n <= sums.size(); start += (n == sums.size() ? 1 : 5)) {
            std::vector<Out> got(n);
            finish_row(sums.data() + start, static_cast<std::int64_t>(n), scale, delta, take_abs,
                       got.data());
            for (std::size_t k = 0; k < n; ++k) {
                const Out want = saturate_to<Out>(
                    finish_value(static_cast<double>(sums[start + k]), scale, delta, take_abs));
                // Bitwise, so that NaN equals NaN and -0 differs from +0.
                const bool same = std::memcmp(&want, &got[k], sizeof(Out)) == 0;
                if (!same) {
                    FAIL("sum " << sums[start + k] << " scale " << scale << " delta " << delta
                                << " abs " << take_abs << ": finish_row gave "
                                << static_cast<double>(got[k]) << ", saturate_to "
                                << static_cast<double>(want));
                }
            }
        }
    }
}

}  // namespace

TEST_CASE("finish_row equals saturate_to(finish_value) for every output depth", "[cpu]") {
    for (bool take_abs : {false, true}) {
        for (const auto& [scale, delta] : std::vector<std::pair<double, double>>{
                 {1.0, 0.0},
                 {0.5, 0.0},
                 {1.0, -128.0},
                 {1.0 / 3.0, 0.25},
                 {-2.0, 10.5},
                 {-1.0, -0.0}}) {  // the last gives -0.0 for a zero sum
            check_against_saturate<std::uint8_t>(scale, delta, take_abs);
            check_against_saturate<std::uint16_t>(scale, delta, take_abs);
            check_against_saturate<float>(scale, delta, take_abs);
        }
    }
}

}  // namespace cudaconv
