#pragma once
// How far a variant's output may be from the reference's and still be
// right: docs/SPEC.md "Tolerances". Each variant states its own bound
// (Backend::tolerance); bench and the tests apply it.
#include "core/job.hpp"

namespace cudaconv {

struct Tolerance {
    double integer_levels = 1.0;   // docs/SPEC.md: integer outputs within 1 level
    double float_relative = 1e-5;  // of the largest |reference| sample
    double float_absolute = 0.0;   // allowed on top: the variant's own float32 bound
};

// The bound of a variant that sums taps times samples in float32 (every
// direct variant): 1 level, or 1e-5 relative plus the float32 summation
// bound n * 2^-24 * sum|taps| * max|input| * |scale| (n taps), since
// docs/SPEC.md allows float32 accumulation and a sum that cancels (a filter
// summing near 0 over a flat area) can keep less than 1e-5 of its result.
Tolerance float32_sum_tolerance(const Job& job);
// The same with max|input| already known (max_abs_filtered_input).
Tolerance float32_sum_tolerance(const Job& job, double max_abs_input);

// Against a reference that is itself within `reference` of the exact
// result (the `cpu` variant where the oracle would take too long), the
// two bounds add; against the oracle (`exact`), the variant's alone.
Tolerance against_reference(const Tolerance& variant, const Tolerance& reference, bool exact);

// The largest |sample| the filtered channels read: the input's, and the
// constant border value where that mode is used. NaN when a filtered
// sample is NaN, +inf for Inf. Scans the input (host memory).
double max_abs_filtered_input(const Job& job);

}  // namespace cudaconv
