#pragma once
// Turns the -f spec into taps: a named filter (`edge`, `gaussian:5`, ...),
// an inline matrix (`3x3:1,2,1,2,4,2,1,2,1`), or a filter file (`-f path`
// when the path exists, or `-f @path`). See docs/SPEC.md, "Filter specs".
#include <string>
#include <vector>

#include "base/errors.hpp"
#include "filters/filter.hpp"

namespace cudaconv {

// A bad spec or filter file: a usage error (exit 2) whose message names the
// spec or the file, the line where there is one, and the problem.
class FilterError : public UsageError {
public:
    using UsageError::UsageError;
};

// Largest accepted filter side and tap count: far beyond any useful
// filter, small enough that a typo (`99999x3`) is caught before allocating.
constexpr int kMaxFilterSide = 1025;
constexpr long kMaxFilterTaps = 1L << 20;

Filter parse_filter_spec(const std::string& spec);

struct NamedFilterInfo {
    std::string syntax;       // e.g. "gaussian:N[:SIGMA]"
    std::string description;  // what it does, in plain words, one line
    std::string example;      // a spec that `list filters -v` expands to taps
    std::string detail = {};  // how, for `list filters -v` (formulas, OpenCV's name)
};
// Every named filter, for `list filters` and --help.
const std::vector<NamedFilterInfo>& named_filters();

}  // namespace cudaconv
