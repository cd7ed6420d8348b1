#pragma once
// The cpu variant's four paths and the rule that picks one for a job: a
// pure function of the job's shape, from costs measured on the 2-core
// development machine (docs/PERFORMANCE.md, "The CPU path against
// OpenCV"). Each path is also a variant of its own (`-k cpu.fft`), for
// tests and bench.
#include <cstdint>
#include <string_view>
#include <vector>

namespace cudaconv {

enum class CpuPath {
    direct,    // every tap a multiply-add (src/cpu/cpu_parallel.cpp)
    two_pass,  // rank-1 filters: a row pass, then a column pass (same file)
    fft,       // tiles through FFTW (src/cpu/cpu_fft.cpp)
    int16,     // u8 to u8, small integer taps: exact sums in int16 lanes (src/cpu/cpu_int16.cpp)
};

std::string_view cpu_path_name(CpuPath path);  // "cpu.direct", "cpu.int16", ...

// What the costs depend on.
struct CpuJobShape {
    std::int64_t nonzero_taps = 0;  // multiply-adds an output of the direct path
    // Samples an output of the two-pass path loads: both factors' non-zero
    // taps (a folded pair of a symmetric factor is two loads and one
    // multiply-add); 0 when the filter is not rank 1.
    std::int64_t two_pass_loads = 0;
    // The FFT path's transform work per output (fft_tiles' cost measure,
    // src/cpu/cpu_fft.hpp); 0 when it cannot run.
    double fft_work_per_output = 0.0;
    // The two-pass path's column pass: the rows it sums for an output, and
    // the bytes those rows take (what it reads for each output row).
    std::int64_t column_rows = 0;
    std::int64_t column_window_bytes = 0;
    // Whether the int16 path gives the job's exact result (u8 to u8,
    // integer taps within its overflow bound: int16_path_problem).
    bool int16_exact = false;
};

// Estimated time per output sample, in nanoseconds on one core, of each
// path; +inf where the path cannot run.
double estimated_ns_per_output(CpuPath path, const CpuJobShape& shape);

// Milliseconds one run of the cheapest path should take on `threads`
// threads, for `outputs` output samples and `memory_bytes` of input read
// and output written: a roofline fitted on the GPU machine's 16 cores
// (cpu_paths.cpp), the longer of the arithmetic (the estimate above,
// shared by the threads) and the memory traffic.
double estimated_cpu_ms(const CpuJobShape& shape, std::int64_t outputs, std::int64_t memory_bytes,
                        unsigned threads);

// The paths that can run the job, cheapest first by that estimate. The
// caller takes the first whose own checks pass (the FFT path's need the
// input scanned, so they run only where it is the cheapest).
std::vector<CpuPath> cpu_paths_by_cost(const CpuJobShape& shape);

}  // namespace cudaconv
