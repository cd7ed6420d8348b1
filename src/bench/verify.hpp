#pragma once
// CUTLASS's habit: no time is shown for an output that was not checked.
// Compares a variant's output with the reference output sample by sample
// and names the worst one.
#include <cstdint>
#include <string>

#include "core/tolerance.hpp"
#include "core/types.hpp"

namespace cudaconv {

struct WorstSample {
    std::int64_t x = -1;  // -1 while nothing was compared
    std::int64_t y = -1;
    int channel = -1;
    double expected = 0.0;
    double actual = 0.0;
    double error = 0.0;  // |actual - expected|; +inf for NaN
};

struct Verdict {
    bool ok = false;
    std::string problem;     // set when the images cannot be compared at all
    double tolerance = 0.0;  // in output units, as applied
    std::int64_t failures = 0;
    std::int64_t samples = 0;
    WorstSample worst;

    // "3 of 1404000 samples over 1; worst at (x=12, y=7, c=2): expected 118,
    // got 121" (or the problem).
    std::string describe() const;
};

// `actual` against `expected`: same size, channels and depth. Integer
// depths within tolerance.integer_levels; f32 within float_relative times
// the largest finite |expected| plus float_absolute; NaN never.
Verdict verify_output(const ConstImageView& expected, const ConstImageView& actual,
                      const Tolerance& tolerance);

}  // namespace cudaconv
