#pragma once
// Checks of numeric options' values, in cudaconv's words and on one line
// ("--repeat: 0 is not a positive number"), in place of CLI11's
// PositiveNumber, NonNegativeNumber and Range: theirs print DBL_MAX's 309
// digits as a bound ("not in range 0.000000 to 1797...") and let NaN pass
// (NaN < 0 is false), so `--max-abs nan` became a limit nothing meets.
// The values are read as filters/numbers.hpp reads a spec's: the whole
// text a number, and a float one finite.
#include <CLI/CLI.hpp>

namespace cudaconv {

// An integer from `min` to `max`: "-j: 0 is not from 1 to 1024".
CLI::Validator integer_from(long long min, long long max);

// An integer of at least 1: "--repeat: 0 is not a positive number".
CLI::Validator positive_integer();

// An integer of at least 0: "--max-pixels: -1 is negative".
CLI::Validator non_negative_integer();

// A finite number (not NaN, not Inf): "--min-psnr: "nan" is not a finite
// number (NaN and Inf are not allowed)".
CLI::Validator finite_number();

// A finite number of at least 0: "--max-abs: -1 is negative".
CLI::Validator finite_non_negative();

}  // namespace cudaconv
