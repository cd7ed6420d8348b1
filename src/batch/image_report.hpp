#pragma once
// What one image's run measured, as text (--timings) and JSON (--json).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/backend.hpp"
#include "core/types.hpp"

namespace cudaconv {

struct ImageReport {
    std::string input;
    std::string output;
    // A stack written one file a filter ({filter} in -o): the files
    // written, in the filters' order (output is the first); else empty.
    std::vector<std::string> outputs;
    std::string variant;
    // What decoded the input: "cpu", or nvJPEG's "nvjpeg-hardware" or
    // "nvjpeg-hybrid" (kernels/codecs/jpeg_batch.hpp).
    std::string decoder = "cpu";
    std::string encoder = "cpu";  // "gpu" where the device compressed a PNG's rows
    // The CUDA device that filtered it, by CUDA's number; -1 where a CPU
    // variant did (or -f none).
    int device = -1;
    std::string filter;
    int filter_width = 0;
    int filter_height = 0;
    std::int64_t width = 0;  // input size
    std::int64_t height = 0;
    std::int64_t out_width = 0;
    std::int64_t out_height = 0;
    int channels = 0;
    int out_channels = 0;  // a layer's C_out; 0: the output has the input's channels
    Depth in_depth = Depth::u8;
    Depth out_depth = Depth::u8;
    double decode_ms = 0.0;
    double encode_ms = 0.0;  // encode and atomic write
    double total_ms = 0.0;
    // The variant's whole run as its thread saw it: copies, waits and
    // filtering (JSON only; shows where a batch's GPU thread spends).
    double run_ms = 0.0;
    // When the image's decoding began: where it sits in a batch's timeline.
    std::chrono::steady_clock::time_point started{};
    RunTimings run;
};

struct FilterStats {
    double median_ms = 0.0;
    double min_ms = 0.0;
    double max_ms = 0.0;
    double mpix_per_s = 0.0;  // output pixels per second
    double gb_per_s = 0.0;    // input plus output bytes per second
};
FilterStats filter_stats(const ImageReport& report);

// A few aligned lines: what ran, then each stage's time.
void print_timings(std::FILE* stream, const ImageReport& report);

nlohmann::json to_json(const ImageReport& report);

}  // namespace cudaconv
