#pragma once
// The inner loops of the cpu variant's integer path (cpu/cpu_int16.hpp):
// u8 samples in 16-bit lanes, twice as many a vector as floats, summed
// exactly in int16 by integer multiply-adds. Highway, every x86 target,
// picked at run time as in cpu/simd_rows.hpp.
#include <cstddef>
#include <cstdint>

namespace cudaconv {

// dst[k] = src[k] as int16, for k < n.
void widen_row(const std::uint8_t* src, std::int64_t n, std::int16_t* dst);

// The taps of a filter grouped by magnitude, so that a tap of weight +1 or
// -1 is one add or subtract and each other magnitude one multiply: group
// g sums its `plus` sources, subtracts its `minus` sources, then
// multiplies by magnitudes[g]. Sources are listed group by group, each
// group's plus sources first: group g's are [begin, plus_end[g]) and
// [plus_end[g], end[g]), begin being end[g - 1] (0 for the first).
struct Int16Taps {
    const std::int16_t* const* sources = nullptr;
    const std::int16_t* magnitudes = nullptr;
    const std::size_t* plus_end = nullptr;
    const std::size_t* end = nullptr;
    std::size_t groups = 0;
};

// out[k] = delta + the taps' sum over sources[.][k], |.| where take_abs,
// saturated to [0, 255], for k < n. Taken in int16 lanes with wrapping
// adds and multiplies, which give the exact sum wherever it fits int16, as
// the caller proves it does (cpu_int16.cpp's bound); then nothing rounds
// and the result is the float path's and cpu-ref's. Sources are read up
// to n rounded up to kRowChunk (cpu/simd_rows.hpp); exactly n outputs are
// written.
void correlate_taps_to_u8(const Int16Taps& taps, std::int16_t delta, bool take_abs, std::int64_t n,
                          std::uint8_t* out);

}  // namespace cudaconv
