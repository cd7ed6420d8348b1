#pragma once
// Whether a filter is rank 1 (an outer product of a column and a row), and
// if so its two factors: what the separable variant runs as a row pass and
// a column pass. Gaussian, box, Sobel, Scharr and Prewitt are rank 1; edge
// and laplacian are not.
#include <optional>
#include <vector>

#include "filters/filter.hpp"

namespace cudaconv {

struct Rank1Filter {
    std::vector<double> row;     // width taps, applied along x
    std::vector<double> column;  // height taps, applied along y
};

// Taps further than this share of the largest |tap| from column[j]*row[i]
// make a filter "not rank 1". Far below what float accumulation or the
// tolerance of docs/SPEC.md can see, far above the rounding of a double outer
// product (gaussian, a normalised box).
constexpr double kRank1RelativeTolerance = 1e-9;

// f(i, j) == column[j] * row[i] for every tap, within
// kRank1RelativeTolerance of max |f|; nullopt when no such pair exists.
// The factors are balanced by a power of two (exact), so the largest
// |tap| of each is within a factor 4 of the other and neither is tiny or
// huge in float.
// An all-zero filter is rank 0, which is separable too: its row and
// column are all zeros, and the separable variant runs it.
std::optional<Rank1Filter> separate(const Filter& f);

}  // namespace cudaconv
