#pragma once
// What the filter targets (filter_spec, filter_plain, filter_mat) hold an
// accepted filter to.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "checks.hpp"
#include "filters/filter.hpp"
#include "filters/spec.hpp"

namespace cudaconv::fuzz {

// A parsed filter is one the variants can take: a size within the limits
// (docs/SPEC.md, "Arithmetic and rounding": 1025 a side, 2^20 in all), one
// tap per cell, every number finite ("NaN/Inf" are errors, so none may come
// out of arithmetic on accepted numbers either).
inline void check_filter(const Filter& f) {
    FUZZ_CHECK(f.width >= 1 && f.height >= 1, "%dx%d", f.width, f.height);
    FUZZ_CHECK(f.width <= kMaxFilterSide && f.height <= kMaxFilterSide, "%dx%d", f.width, f.height);
    FUZZ_CHECK(static_cast<long>(f.width) * f.height <= kMaxFilterTaps, "%dx%d", f.width, f.height);
    FUZZ_CHECK(f.taps.size() == static_cast<std::size_t>(f.width) * f.height, "%zu taps for %dx%d",
               f.taps.size(), f.width, f.height);
    for (std::size_t i = 0; i < f.taps.size(); ++i) {
        FUZZ_CHECK(std::isfinite(f.taps[i]), "tap %zu is %g", i, f.taps[i]);
    }
    FUZZ_CHECK(std::isfinite(f.delta), "delta %g", f.delta);
}

// A filter file's parser, `parse(text, name)`, on any bytes as read from a
// file named `name`: a filter check_filter accepts, or a FilterError of one
// line that starts with the file's name.
template <typename Parse>
void check_file_parser(Parse parse, const std::string& name, const std::uint8_t* data,
                       std::size_t size) {
    try {
        check_filter(parse(std::string_view(reinterpret_cast<const char*>(data), size), name));
    } catch (const FilterError& e) {
        const std::string message = e.what();
        check_message(message);
        FUZZ_CHECK(message.rfind(name, 0) == 0, "the message does not name the file: %s",
                   message.c_str());
    }
}

}  // namespace cudaconv::fuzz
