#pragma once
// From the user's options and the parsed filter to the ConvParams every
// variant consumes: --normalize and --flip are applied to the taps here,
// once, so no variant ever deals with them.
#include "cli/filter_options.hpp"
#include "core/job.hpp"

namespace cudaconv {

// Throws UsageError for a bad border name, anchor or non-finite number.
ConvParams build_conv_params(const FilterOptions& options, Filter filter);

}  // namespace cudaconv
