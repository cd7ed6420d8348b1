#pragma once
// From the user's options and the parsed filter to the ConvParams every
// variant consumes: --normalize and --flip are applied to the taps here,
// once, so no variant ever deals with them, and the result is checked here,
// once, whatever source its taps came from.
#include "cli/filter_options.hpp"
#include "core/job.hpp"

namespace cudaconv {

// Throws UsageError for a bad border name, anchor or non-finite number,
// and FilterError when the final taps, scale and delta could overflow
// float32 (filters/filter.hpp, check_float32_range).
ConvParams build_conv_params(const FilterOptions& options, Filter filter);

}  // namespace cudaconv
