#include "filters/numbers.hpp"

#include <locale.h>  // newlocale, for strtod_l
#include <stdlib.h>  // strtod_l

#include <cerrno>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <string>
#include <system_error>

#include "base/printable.hpp"
#include "filters/spec.hpp"

namespace cudaconv {

namespace {

// Long enough for any sensible number, short enough to keep an error on
// one line when the "number" is a pasted paragraph.
constexpr std::size_t kMaxQuotedChars = 40;

// from_chars rejects a leading '+', which people write ("+1e-3").
std::string_view without_plus(std::string_view token) {
    if (token.size() > 1 && token[0] == '+' && token[1] != '-' && token[1] != '+') {
        token.remove_prefix(1);
    }
    return token;
}

// from_chars says result_out_of_range for a decimal too small for a double
// as for one too large, and leaves the value unset. strtod tells them
// apart: ERANGE with a result of magnitude at most DBL_MIN is underflow,
// rounded to 0 or a subnormal (as "1e-310" is, without ERANGE), which is
// the value the text stands for as nearly as a double can. strtod_l in
// the "C" locale, so that a decimal point is a point wherever it runs.
bool underflows(std::string_view digits, double& value) {
    static const locale_t c_locale = newlocale(LC_ALL_MASK, "C", locale_t{});
    if (c_locale == locale_t{}) return false;
    const std::string text(digits);
    errno = 0;
    char* end = nullptr;
    const double parsed = strtod_l(text.c_str(), &end, c_locale);
    if (errno != ERANGE || end != text.c_str() + text.size() || std::fabs(parsed) > DBL_MIN) {
        return false;
    }
    value = parsed;
    return true;
}

}  // namespace

std::string quoted(std::string_view token) {
    return "\"" + printable(token, kMaxQuotedChars) + "\"";
}

std::string filter_where(std::string_view spec) {
    return "filter \"" + printable_spec(spec) + "\"";
}

bool parse_finite_number(std::string_view token, double& value, std::string& problem) {
    const std::string_view digits = without_plus(token);
    double parsed = 0.0;
    const char* end = digits.data() + digits.size();
    const auto [ptr, ec] = std::from_chars(digits.data(), end, parsed);
    if (ec == std::errc::result_out_of_range && ptr == end) {
        if (underflows(digits, value)) return true;
        problem = quoted(token) + " is out of range for a double";
        return false;
    }
    if (ec != std::errc() || ptr != end || digits.empty()) {
        problem = quoted(token) + " is not a number";
        return false;
    }
    if (!std::isfinite(parsed)) {
        problem = quoted(token) + " is not a finite number (NaN and Inf are not allowed)";
        return false;
    }
    value = parsed;
    return true;
}

bool parse_integer(std::string_view token, long long& value, std::string& problem) {
    const std::string_view digits = without_plus(token);
    long long parsed = 0;
    const char* end = digits.data() + digits.size();
    const auto [ptr, ec] = std::from_chars(digits.data(), end, parsed);
    if (ec == std::errc::result_out_of_range && ptr == end) {
        problem = quoted(token) + " is out of range";
        return false;
    }
    if (ec != std::errc() || ptr != end || digits.empty()) {
        problem = quoted(token) + " is not an integer";
        return false;
    }
    value = parsed;
    return true;
}

void check_filter_size(long long width, long long height, const std::string& where) {
    const std::string size = std::to_string(width) + "x" + std::to_string(height);
    if (width < 1 || height < 1) {
        throw FilterError(where + ": a " + size +
                          " filter is empty (width and height must be at least 1)");
    }
    if (width > kMaxFilterSide || height > kMaxFilterSide) {
        throw FilterError(where + ": a " + size + " filter is too large (at most " +
                          std::to_string(kMaxFilterSide) + " taps per side)");
    }
    // Both sides are bounded, so the product cannot overflow. Sides up to
    // kMaxFilterSide are allowed but not all at once (1025x1025).
    if (width * height > kMaxFilterTaps) {
        throw FilterError(where + ": a " + size + " filter is too large (" +
                          std::to_string(width * height) + " taps; at most " +
                          std::to_string(kMaxFilterTaps) + ")");
    }
}

}  // namespace cudaconv
