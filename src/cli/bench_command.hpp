#pragma once
// `cudaconv bench`: variants side by side on seeded random images, timed,
// verified, and reported as a table, CSV and JSON (src/bench/ does the work).
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench/cases.hpp"

namespace cudaconv {

struct BenchOptions {
    std::vector<std::string> sizes{kDefaultBenchSizes};
    std::vector<std::string> filters{kDefaultBenchFilters};
    std::string variants = "all";
    std::vector<std::string> depths{kDefaultBenchDepths};
    std::string border = "reflect101";
    int warmup = 3;
    int repeat = 20;
    std::string csv_path;
    std::string json_path;
    bool no_verify = false;
    bool overwrite = false;  // --csv/--json may replace files that exist
    std::string timing = "device";
    std::vector<std::string> params;     // --param NAME=VALUE
    std::string peers;                   // --peer: a comma list (opencv)
    std::optional<std::string> devices;  // --devices all|N|LIST: time each in turn
};

void add_bench_options(CLI::App& app, BenchOptions& options);

// Returns the exit code: 0, or 1 when some variant was wrong or failed.
// Throws UsageError for bad options (exit 2).
int run_bench_command(const BenchOptions& options);

}  // namespace cudaconv
