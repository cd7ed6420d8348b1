#pragma once
// The cpu variant's FFT path, for large dense filters: the output cut into
// tiles, each tile's input (bordered as every variant borders it) taken to
// the frequency domain by FFTW, multiplied by the filter's spectrum and
// brought back (overlap-save: a tile of T samples yields T - f + 1 outputs
// on each axis), in double precision. Tiles run in parallel on all cores;
// FFTW's plans are made once a process for each tile size.
#include <cstdint>
#include <string>

#include "core/job.hpp"
#include "core/tolerance.hpp"

namespace cudaconv {

// The transform size of a tile and the outputs it yields on each axis.
struct FftTiles {
    std::int64_t width = 0;  // even (a real-to-complex transform's width)
    std::int64_t height = 0;
    std::int64_t step_x = 0;  // outputs a tile yields: width - filter_width + 1
    std::int64_t step_y = 0;
    // The transforms' work per useful output: samples x log2(samples) over
    // step_x x step_y, weighted up for planes past the L2.
    double work_per_output = 0.0;
};

// The tile that costs least per output (transform work over useful
// outputs), no larger than the whole bordered input needs. Pure.
// Precondition: every argument >= 1.
FftTiles fft_tiles(int filter_width, int filter_height, std::int64_t out_width,
                   std::int64_t out_height);

// The same for a job (an empty output counted as 1x1).
FftTiles fft_tiles(const Job& job);

// max_abs_filtered_input (core/tolerance.hpp), its rows scanned in bands
// on all cores: the input's largest filtered magnitude, NaN if it holds a
// NaN. The max_abs_input below is this, found once and passed to each.
double max_abs_filtered_input_on_all_cores(const Job& job);

// Why the FFT path cannot take this job, or "" where it can: NaN or Inf
// input samples (a transform spreads them to every output), and sums whose
// spectra would overflow double.
std::string fft_path_problem(const Job& job, double max_abs_input);

// The FFT path's bound on |result - exact| in output units, times |scale|:
// core/fft_sizes' fft_error_bound for one tile's transform in double, plus
// the float32 rounding of each result (at most sum|taps| * max|input|).
double fft_path_error_bound(const Job& job, double max_abs_input);

// The FFT path's tolerance, as the GPU fft variant's: integer outputs
// within 1 + floor(bound) levels, float outputs within the bound.
Tolerance fft_path_tolerance(const Job& job);

// Whether the FFT path's bound is within what the cpu variant promises for
// every job (core/tolerance.hpp's float32_sum_tolerance): half a level for
// integer outputs, so that rounding stays within 1; the direct path's
// float32 summation bound for float outputs (which holds for any filter
// of two taps or more).
bool fft_path_within_direct_tolerance(const Job& job, double max_abs_input);

// Filters job.src into job.dst. Precondition: fft_path_problem is "".
void correlate_fft(const Job& job);

}  // namespace cudaconv
