#include "filters/rank1.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace cudaconv {
namespace {

double largest_magnitude(const std::vector<double>& v) {
    double m = 0.0;
    for (const double x : v) m = std::max(m, std::abs(x));
    return m;
}

}  // namespace

std::optional<Rank1Filter> separate(const Filter& f) {
    const auto w = static_cast<std::size_t>(f.width);
    const auto h = static_cast<std::size_t>(f.height);
    if (w == 0 || h == 0 || f.taps.size() != w * h) return std::nullopt;

    // The pivot is the largest tap: dividing by it is the best-conditioned
    // choice, and it lies in a row and a column that are not zero.
    std::size_t pivot = 0;
    for (std::size_t k = 1; k < f.taps.size(); ++k) {
        if (std::abs(f.taps[k]) > std::abs(f.taps[pivot])) pivot = k;
    }
    const double largest = std::abs(f.taps[pivot]);
    if (largest == 0.0) {
        return Rank1Filter{std::vector<double>(w, 0.0), std::vector<double>(h, 0.0)};
    }
    if (!std::isfinite(largest)) return std::nullopt;

    // If f is rank 1, the pivot's row is the row (times a constant) and
    // its column, divided by the pivot, is the matching column.
    const std::size_t pi = pivot % w;
    const std::size_t pj = pivot / w;
    Rank1Filter r{std::vector<double>(w), std::vector<double>(h)};
    for (std::size_t i = 0; i < w; ++i) r.row[i] = f.taps[pj * w + i];
    for (std::size_t j = 0; j < h; ++j) r.column[j] = f.taps[j * w + pi] / f.taps[pivot];

    // Move a power of two from the larger factor to the smaller one, which
    // keeps every product bit for bit and both factors near each other.
    int row_exp = 0;
    int column_exp = 0;
    std::frexp(largest_magnitude(r.row), &row_exp);
    std::frexp(largest_magnitude(r.column), &column_exp);
    const int shift = (row_exp - column_exp) / 2;
    for (double& t : r.row) t = std::ldexp(t, -shift);
    for (double& t : r.column) t = std::ldexp(t, shift);

    const double tolerance = kRank1RelativeTolerance * largest;
    for (std::size_t j = 0; j < h; ++j) {
        for (std::size_t i = 0; i < w; ++i) {
            if (!(std::abs(f.taps[j * w + i] - r.column[j] * r.row[i]) <= tolerance)) {
                return std::nullopt;
            }
        }
    }
    return r;
}

}  // namespace cudaconv
