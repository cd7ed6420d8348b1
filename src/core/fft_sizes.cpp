#include "core/fft_sizes.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "core/tolerance.hpp"

namespace cudaconv {
namespace {

// The derivation in kernels/fft/fft.cu gives about 15 for radix-2 FFTs. On an
// H100 (CUDA 13), over 1,300 jobs (all borders, sizes 1x1 to 8000x6000,
// filters 1x1 to 101x101, uniform, constant, striped and box inputs), the
// worst error was 0.89 u (log2 N + 2) S M: this factor leaves 18x margin.
constexpr double kFftErrorFactor = 16.0;

}  // namespace

std::int64_t next_fast_fft_size(std::int64_t n) {
    if (n <= 1) return 1;
    if (n > kMaxFastFftInput) {
        throw std::out_of_range("next_fast_fft_size: " + std::to_string(n) + " is too large");
    }
    // Every 7-smooth m = 2^a 3^b 5^c 7^d: for each odd part below n, the
    // power of two that first reaches n. A factor is only multiplied in
    // while the product is below n, so nothing exceeds 7n < 2^63.
    std::int64_t best = std::numeric_limits<std::int64_t>::max();
    for (std::int64_t p7 = 1;; p7 *= 7) {
        for (std::int64_t p5 = p7;; p5 *= 5) {
            for (std::int64_t p3 = p5;; p3 *= 3) {
                std::int64_t m = p3;
                while (m < n) m *= 2;
                best = std::min(best, m);
                if (p3 >= n) break;
            }
            if (p5 >= n) break;
        }
        if (p7 >= n) return best;
    }
}

std::int64_t next_fast_even_fft_size(std::int64_t n) {
    // m = 2k is even and 7-smooth exactly when k is 7-smooth.
    return 2 * next_fast_fft_size((std::max<std::int64_t>(n, 1) + 1) / 2);
}

FftShape fft_shape(std::int64_t dst_width, std::int64_t dst_height, int filter_width,
                   int filter_height) {
    FftShape s;
    s.used_width = dst_width + filter_width - 1;
    s.used_height = dst_height + filter_height - 1;
    s.padded_width = next_fast_even_fft_size(s.used_width);
    // At least 2 rows: every plan stays a true 2-D one, the shape cuFFT is
    // built and tested for; a zero row costs nothing at that size.
    s.padded_height = next_fast_fft_size(std::max<std::int64_t>(s.used_height, 2));
    return s;
}

FftShape fft_shape(const Job& job) {
    return fft_shape(job.dst.width, job.dst.height, job.params.filter.width,
                     job.params.filter.height);
}

double tap_abs_sum(const Job& job) {
    double sum = 0.0;
    for (double t : job.params.filter.taps) sum += std::abs(t);
    return sum;
}

double fft_error_bound(const FftShape& shape, double tap_abs_sum, double max_abs_sample,
                       double unit_roundoff) {
    const double samples =
        static_cast<double>(shape.padded_width) * static_cast<double>(shape.padded_height);
    return kFftErrorFactor * unit_roundoff * (std::log2(samples) + 2.0) * tap_abs_sum *
           max_abs_sample;
}

double fft_error_bound(const Job& job) {
    return std::abs(job.params.scale) *
           fft_error_bound(fft_shape(job), tap_abs_sum(job), max_abs_filtered_input(job));
}

}  // namespace cudaconv
