#pragma once
// The last step of the cpu variant for a row of float sums: scale * sum +
// delta, |.| when asked, then saturate_to<Out> (round half to even, clamp,
// NaN to 0) -- the results of finish_value and saturate_to, computed
// without a branch a sample so that the compiler vectorises the loop.
// Done per sample with saturate_to, the clamps' branches mispredicted on
// images whose sums change sign at random: on the edge filter 70% of the
// cpu variant's time went there, against 2% in the taps.
#include <cstdint>

namespace cudaconv {

void finish_row(const float* sums, std::int64_t n, double scale, double delta, bool take_abs,
                std::uint8_t* out);
void finish_row(const float* sums, std::int64_t n, double scale, double delta, bool take_abs,
                std::uint16_t* out);
void finish_row(const float* sums, std::int64_t n, double scale, double delta, bool take_abs,
                float* out);

}  // namespace cudaconv
