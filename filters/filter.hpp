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

}  // namespace cudaconv
