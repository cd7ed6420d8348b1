#pragma once
// The host-side arithmetic of the frequency-domain paths (the fft variant
// on the GPU, the cpu variant's FFT path), kept pure so that it can be
// unit-tested: transform sizes cuFFT and FFTW are fast at, the shape of the
// padded problem, and the documented error bound that is the fft variant's
// tolerance (docs/SPEC.md, "Tolerances"). kernels/fft/fft.cu explains the
// scheme and derives the bound.
#include <cstdint>

#include "core/job.hpp"

namespace cudaconv {

// The largest n the size helpers take: 7 * 2^60 still fits an int64, so no
// candidate product can overflow. Images are many orders of magnitude below.
constexpr std::int64_t kMaxFastFftInput = std::int64_t{1} << 60;

// The smallest m >= n whose prime factors are all 2, 3, 5 or 7 (cuFFT's
// fast radices); 1 for n <= 1. Throws std::out_of_range past kMaxFastFftInput.
std::int64_t next_fast_fft_size(std::int64_t n);

// The same, but even (2 for n <= 2): the width of a real-to-complex
// transform, which cuFFT computes as a half-length complex one.
std::int64_t next_fast_even_fft_size(std::int64_t n);

// The frequency-domain problem for a dst_width x dst_height output and a
// filter_width x filter_height filter. Output (x, y) reads the bordered
// input over a (used_width x used_height) window; zero-padded to the
// transform size, a circular correlation then never wraps into an output.
struct FftShape {
    std::int64_t used_width = 0;     // dst_width + filter_width - 1
    std::int64_t used_height = 0;    // dst_height + filter_height - 1
    std::int64_t padded_width = 0;   // even and fast, >= used_width
    std::int64_t padded_height = 0;  // fast, >= max(used_height, 2)

    // Real-to-complex keeps padded_width / 2 + 1 columns (Hermitian symmetry).
    std::int64_t spectrum_width() const { return padded_width / 2 + 1; }
    std::int64_t plane() const { return padded_width * padded_height; }
    std::int64_t spectrum_plane() const { return spectrum_width() * padded_height; }
};

// Precondition: every argument >= 1 (check_job refuses empty outputs).
FftShape fft_shape(std::int64_t dst_width, std::int64_t dst_height, int filter_width,
                   int filter_height);
FftShape fft_shape(const Job& job);

// Sum of |tap|: the filter's gain on the worst input, and the largest
// magnitude its spectrum can reach.
double tap_abs_sum(const Job& job);

// Unit roundoffs: the transforms' precision.
constexpr double kFloat32Roundoff = 1.0 / 16777216.0;          // 2^-24: cuFFT here
constexpr double kFloat64Roundoff = 1.0 / 9007199254740992.0;  // 2^-53: FFTW on the CPU

// Bound on |fft result - exact correlation| before scale/delta/abs and
// rounding, in input units: kFftErrorFactor * u * (log2(N) + 2) * S * M
// with u the unit roundoff, N the transform's sample count, S =
// tap_abs_sum, M = max_abs_filtered_input (core/tolerance.hpp). See
// kernels/fft/fft.cu for the derivation.
double fft_error_bound(const FftShape& shape, double tap_abs_sum, double max_abs_sample,
                       double unit_roundoff = kFloat32Roundoff);

// The same for a whole job, in output units (times |scale|; |.| and delta
// add no error). A test compares float outputs within this absolute bound,
// and integer outputs within 1 + floor(bound) levels (1 when bound < 1):
// rounding can move a value by up to one level on its own.
double fft_error_bound(const Job& job);

}  // namespace cudaconv
