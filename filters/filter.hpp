#pragma once
// A convolution filter as data: taps in row-major order, nothing else.
// Specs (named, inline, files) become a Filter in filters/spec.hpp;
// variants only ever consume taps.
#include <string>
#include <vector>

namespace cudaconv {

struct Filter {
    int width = 0;
    int height = 0;
    std::vector<double> taps;  // height rows of width taps
    std::string label;         // how the user named it, for logs and {filter}
    // How messages name it, printable (base/printable.hpp): a file's path,
    // or `filter "SPEC"`; empty for filters made in code.
    std::string source;
    // Added to every output after the taps: a libvips .mat file's offset
    // (out = sum/scale + offset), which taps alone cannot express. The taps
    // are already divided by the file's scale. The CLI folds it into --delta.
    double delta = 0.0;

    double at(int x, int y) const { return taps[static_cast<std::size_t>(y) * width + x]; }
    double sum() const;
    // The filter rotated by 180 degrees (correlation <-> convolution).
    Filter rotated_180() const;
    // Taps divided by their sum; unchanged when the sum is 0.
    Filter normalized() const;
};

// The largest integer sample (u16): the bound on an input's magnitude in
// the worst case of a filter's sum.
constexpr double kLargestIntegerSample = 65535.0;

// Throws FilterError unless the filter's sums stay within float32, in
// which variants hold taps and sum: Σ|tap| × largest_sample (the sum before
// the scale; samples up to kLargestIntegerSample, or a larger constant
// border) and that × |scale| + |delta| (the output), taps, scale and delta
// rounded to float32. `where` starts the message: `k.mat: the filter's
// taps overflow float32 (worst-case sum 3.4e+40)`. Every tap and the delta
// are then within float32 too.
void check_float32_range(const Filter& f, double largest_sample, double scale, double delta,
                         const std::string& where);

}  // namespace cudaconv
