#pragma once
// The cpu variant's integer path, cpu.int16: u8 in, u8 out, integer taps
// whose sums provably fit int16. Samples are widened to 16-bit lanes (32
// an AVX-512 vector, where floats give 16), each tap one integer multiply
// and add over a whole padded row, then |.| and a saturating narrowing to
// u8. Integer sums are exact in float32 too, so its results are the float
// path's and cpu-ref's, byte for byte: a faster path, not a new tolerance.
#include <string>

#include "core/job.hpp"

namespace cudaconv {

// The bound: every sum and partial sum must stay within int16, which
// 255 * sum(|taps|) + |delta| <= kInt16SumLimit proves for any u8 samples
// (and any order of the taps).
constexpr double kInt16SumLimit = 32767.0;

// Why cpu.int16 cannot give the exact result of `job`, or "" when it can.
std::string int16_path_problem(const Job& job);

// Runs the job on all cores; int16_path_problem(job) must be "".
void correlate_int16(const Job& job);

}  // namespace cudaconv
