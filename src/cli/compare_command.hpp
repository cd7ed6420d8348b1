#pragma once
// `cudaconv compare A B`: how far an image (or a folder of them) is from
// the expected one, and whether that is within the user's limits.
// Exit 0 within the limits, 1 outside them (or a file missing), 2 when
// something cannot be compared at all.
#include <cstdint>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "compare/image_diff.hpp"
#include "io/decode_limits.hpp"

namespace cudaconv {

struct CompareOptions {
    std::string a;  // under test
    std::string b;  // expected
    std::optional<double> max_abs;
    std::optional<double> max_rel;
    std::optional<double> min_psnr;
    std::string max_differing;  // "120" or "0.5%"; empty: not checked
    double pixel_threshold = 0.0;
    std::string diff_path;  // a heat map file, or a folder in folder mode
    std::string depth = "same";
    bool ignore_alpha = false;
    bool ignore_extra = false;
    bool json = false;
    bool overwrite = false;                        // heat maps may replace existing files
    std::uint64_t max_pixels = kDefaultMaxPixels;  // --max-pixels; 0: no limit
};

void add_compare_options(CLI::App& app, CompareOptions& options);
int run_compare_command(const CompareOptions& options);

}  // namespace cudaconv
