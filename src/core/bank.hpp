#pragma once
// Filter banks (`-f A -f B ... --combine HOW`, docs/SPEC.md "Banks"):
// several filters over one input, each response float32 and unrounded,
// combined sample by sample into one image; --scale, --delta and --abs
// then apply once, to the combination, with one rounding to the output's
// depth.
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/types.hpp"

namespace cudaconv {

enum class Combine : std::uint8_t {
    magnitude,  // sqrt of the responses' squares summed (a gradient's length)
    max,        // the largest response (an oriented bank's strongest)
    sum,        // the responses added
    stack,      // every response kept, one channel a filter and image channel
};

// "magnitude", "max", "sum", "stack"; nullopt for anything else.
std::optional<Combine> parse_combine(std::string_view name);
std::string_view combine_name(Combine how);

// The channels of a bank's output: the image's, or for `stack` each
// filter's filtered channels in turn, then the unfiltered ones (a kept
// alpha) once.
int combined_channels(Combine how, int filters, int channels, int filtered_channels);

// Combines `responses` (float32, each out's size and the image's channels)
// into `out` (any depth, combined_channels): for each of the first
// `filtered_channels` channels, the combination of the responses' samples
// in double (stack: each response's sample in its own channel, filter k's
// channel c at k * filtered_channels + c), then scale, delta, |.| if
// `take_abs`, and the output depth with round-half-to-even and saturation
// (core/convert.hpp); the channels past them (a kept alpha) are the first
// response's, unchanged, last.
void combine_responses(const std::vector<ConstImageView>& responses, Combine how,
                       int filtered_channels, double scale, double delta, bool take_abs,
                       const ImageView& out);

}  // namespace cudaconv
