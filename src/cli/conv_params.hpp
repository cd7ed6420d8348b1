#pragma once
// From the user's options and the parsed filter to the ConvParams every
// variant consumes: --normalize and --flip are applied to the taps here,
// once, so no variant ever deals with them, and the result is checked here,
// once, whatever source its taps came from.
#include <optional>
#include <string>
#include <vector>

#include "cli/filter_options.hpp"
#include "core/bank.hpp"
#include "core/job.hpp"

namespace cudaconv {

// Throws UsageError for a bad border name, anchor or non-finite number,
// and FilterError when the final taps, scale and delta could overflow
// float32 on samples up to `largest_input` (filters/filter.hpp,
// check_float32_range). `warn`: say when --border-value is ignored.
ConvParams build_conv_params(const FilterOptions& options, Filter filter,
                             double largest_input = kLargestIntegerSample, bool warn = true);

// A chain's steps (core/chain.hpp), one a filter in order: each with the
// run's border, --normalize and --flip; --scale, --delta and --abs on the
// last step only, the others 1, 0 and off (a filter file's offset stays its
// step's); each step checked on the largest sample the steps before it can
// make. --anchor is refused for more than one filter.
std::vector<ConvParams> build_chain_params(const FilterOptions& options,
                                           std::vector<Filter> filters);

// A bank's filters (--combine, core/bank.hpp), each with the run's border,
// --normalize and --flip, and scale 1, delta 0 (a filter file's offset
// stays its own): --scale, --delta and --abs apply to the combination.
// Refused (UsageError): --alpha premultiply, --anchor for more than one
// filter, --border valid with filters of different sizes.
std::vector<ConvParams> build_bank_params(const FilterOptions& options,
                                          std::vector<Filter> filters);

// --combine's value; UsageError for an unknown name.
std::optional<Combine> parse_combine_option(const std::string& text);

}  // namespace cudaconv
