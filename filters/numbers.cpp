#include "filters/numbers.hpp"

#include <charconv>
#include <cmath>
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
