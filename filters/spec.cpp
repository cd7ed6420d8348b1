// parse_filter_spec: decides which kind of spec the user gave and hands it
// to the part that builds it (named.cpp, file_formats.cpp, or the inline
// matrix below).
#include "filters/spec.hpp"

#include <cctype>
#include <filesystem>
#include <system_error>

#include "base/printable.hpp"
#include "filters/file_formats.hpp"
#include "filters/named.hpp"
#include "filters/numbers.hpp"

namespace cudaconv {

namespace fs = std::filesystem;

namespace {

bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// `WxH:v,v,...`: a leading digit, or a sign before one (`-3x3:` gets the
// size error, not "unknown filter").
bool looks_inline(const std::string& spec) {
    return is_digit(spec[0]) || (spec.size() > 1 && spec[0] == '-' && is_digit(spec[1]));
}

// A missing file more likely than a misspelt name: `blur.txt`, `k/edge`.
bool looks_like_path(const std::string& spec) {
    return spec.find_first_of("/\\.") != std::string::npos && spec.find(':') == std::string::npos;
}

std::string trimmed(std::string_view text) {
    const auto first = text.find_first_not_of(" \t");
    if (first == std::string_view::npos) return {};
    const auto last = text.find_last_not_of(" \t");
    return std::string(text.substr(first, last - first + 1));
}

Filter parse_inline_filter(const std::string& spec) {
    const std::string where = filter_where(spec);
    const std::size_t colon = spec.find(':');
    if (colon == std::string::npos) {
        throw FilterError(where + ": an inline filter needs its values: WxH:v,v,... "
                                  "(e.g. 3x3:1,2,1,2,4,2,1,2,1)");
    }
    const std::string size = spec.substr(0, colon);
    const std::size_t x = size.find_first_of("xX");
    long long width = 0;
    long long height = 0;
    std::string problem;
    if (x == std::string::npos ||
        !parse_integer(std::string_view(size).substr(0, x), width, problem) ||
        !parse_integer(std::string_view(size).substr(x + 1), height, problem)) {
        throw FilterError(where + ": size \"" + printable_spec(size) + "\" must be WxH, e.g. 3x3");
    }
    check_filter_size(width, height, where);  // before a single tap is stored

    const std::string_view values = std::string_view(spec).substr(colon + 1);
    const auto expected = static_cast<std::size_t>(width * height);
    Filter f;
    f.width = static_cast<int>(width);
    f.height = static_cast<int>(height);
    f.taps.reserve(expected);
    for (std::size_t start = 0;;) {
        const std::size_t comma = values.find(',', start);
        const std::string field = trimmed(values.substr(
            start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
        const std::string index = std::to_string(f.taps.size() + 1);
        if (field.empty()) {
            if (values.find_first_not_of(" \t") == std::string_view::npos) {
                throw FilterError(where + ": no values after ':' (expected " +
                                  std::to_string(expected) + ")");
            }
            throw FilterError(where + ": value " + index +
                              " is empty (a stray or trailing comma?)");
        }
        double value = 0.0;
        if (!parse_finite_number(field, value, problem)) {
            throw FilterError(where + ": value " + index + " " + problem);
        }
        if (f.taps.size() == expected) {
            throw FilterError(where + ": " + std::to_string(width) + "x" + std::to_string(height) +
                              " needs " + std::to_string(expected) + " values, got more");
        }
        f.taps.push_back(value);
        if (comma == std::string_view::npos) break;
        start = comma + 1;
    }
    if (f.taps.size() != expected) {
        throw FilterError(where + ": " + std::to_string(width) + "x" + std::to_string(height) +
                          " needs " + std::to_string(expected) + " values, got " +
                          std::to_string(f.taps.size()));
    }
    f.label = spec;
    f.source = where;
    return f;
}

[[noreturn]] void throw_unknown(const std::string& spec) {
    if (looks_like_path(spec)) {
        throw FilterError(printable(spec) +
                          ": no such filter file (nor a filter name; run 'cudaconv list filters')");
    }
    const std::string name = spec.substr(0, spec.find(':'));
    std::string message = "unknown filter \"" + printable_spec(name) + "\"";
    if (name != spec) message += " in \"" + printable_spec(spec) + "\"";
    message += "; run 'cudaconv list filters'";
    const std::string suggestion = closest_filter_name(name);
    if (!suggestion.empty()) message += " (did you mean \"" + suggestion + "\"?)";
    throw FilterError(message);
}

}  // namespace

Filter parse_filter_spec(const std::string& spec) {
    if (spec.empty()) throw FilterError("empty filter spec; run 'cudaconv list filters'");
    if (spec[0] == '@') {
        if (spec.size() == 1) throw FilterError("filter \"@\": a file name must follow '@'");
        return read_filter_file(spec.substr(1));
    }
    // docs/SPEC.md: "-f path when the path exists". A regular file wins over a
    // name; anything else that exists (a directory, a pipe such as
    // `-f <(gen_taps)`) is tried only when the spec is not a filter, so a
    // folder called `edge` cannot shadow the `edge` filter.
    std::error_code ec;
    const fs::file_status status = fs::status(spec, ec);
    if (fs::is_regular_file(status)) return read_filter_file(spec);
    if (looks_inline(spec)) {
        if (looks_like_path(spec) && !fs::exists(status)) throw_unknown(spec);
        return parse_inline_filter(spec);
    }
    if (std::optional<Filter> named = make_named_filter(spec)) return std::move(*named);
    if (fs::exists(status)) return read_filter_file(spec);
    throw_unknown(spec);
}

}  // namespace cudaconv
