#pragma once
// Strict, locale-independent parsing of the numbers in filter specs and
// filter files, and the one size check every way of making a filter shares.
// std::from_chars, not strtod: a German locale must not turn "0.5" into an
// error, and the whole token must be a number ("1.5x" is not 1.5).
#include <string>
#include <string_view>

namespace cudaconv {

// All of `token` as a finite double: integers, decimals, exponents, a
// leading + or -. A decimal too small for a double is the nearest one (0
// or a subnormal: "1e-400" is 0); one too large is refused. On failure returns false and sets `problem` to a phrase
// that names the token, e.g. `"abc" is not a number`.
bool parse_finite_number(std::string_view token, double& value, std::string& problem);

// All of `token` as a decimal integer, optionally signed.
bool parse_integer(std::string_view token, long long& value, std::string& problem);

// `token` in double quotes for a message, escaped (base/printable.hpp)
// and shortened when long.
std::string quoted(std::string_view token);

// How messages name a spec that is not a file: `filter "SPEC"`, the spec
// escaped and shortened as base/printable.hpp's printable_spec does.
std::string filter_where(std::string_view spec);

// Throws FilterError "`where`: ..." unless 1 <= width, height <=
// kMaxFilterSide and width * height <= kMaxFilterTaps. Call it before
// allocating taps, so `99999x99999:1` fails at once.
void check_filter_size(long long width, long long height, const std::string& where);

}  // namespace cudaconv
