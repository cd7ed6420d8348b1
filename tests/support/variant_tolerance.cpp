#include "support/variant_tolerance.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/fft_sizes.hpp"

namespace cudaconv::test {

Tolerance tolerance_for(const Backend& variant, const Job& job, const cv::Mat&) {
    Tolerance t;  // SPEC.md: integer outputs within 1 level, f32 within 1e-5 relative
    if (variant.name() != "fft") return t;
    // fft's float32 transforms: the absolute bound kernels/fft.cu derives.
    const double bound = fft_error_bound(job);
    t.integer_levels = 1.0 + std::floor(bound);
    t.float_absolute = bound;
    return t;
}

}  // namespace cudaconv::test
