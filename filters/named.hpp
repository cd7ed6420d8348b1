#pragma once
// The named filters: `edge`, `sobel-x`, `box:5`, `gaussian:sigma=2`, ...
// One table in named.cpp builds them and describes them for `list filters`,
// so the list can never miss a filter the parser accepts.
#include <optional>
#include <string>
#include <string_view>

#include "filters/filter.hpp"

namespace cudaconv {

// The filter `spec` names, labelled with `spec`. nullopt when the name (the
// part before the first ':', any case) is not a named filter; a FilterError
// when it is but its arguments are wrong.
std::optional<Filter> make_named_filter(const std::string& spec);

// The filter name closest to `name`, for "did you mean"; empty when none is
// close enough to be a likely typo.
std::string closest_filter_name(std::string_view name);

}  // namespace cudaconv
