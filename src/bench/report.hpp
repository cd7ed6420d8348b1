#pragma once
// A bench's results for people (a table per filter and depth, variants
// down, sizes across) and for programs (CSV and JSON, a row per variant x
// size x filter x depth). Times appear only for verified (or, under
// --no-verify, unverified) outputs: a wrong output shows WRONG.
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/results.hpp"

namespace cudaconv {

void print_bench_tables(std::FILE* stream, const BenchReport& report);

// A header line, then one line per row.
std::string bench_csv(const BenchReport& report);
// bench --devices: every device's report in one file, each row ending with
// the device it was timed on ("device", CUDA's number; empty for a CPU row).
std::string bench_csv_devices(const std::vector<BenchReport>& reports);

// {"context": {...}, "results": [ {...}, ... ]}, keys in a reading order
nlohmann::ordered_json bench_json(const BenchReport& report);
// bench --devices: {"devices": [each device's bench_json, in order]}.
nlohmann::ordered_json bench_json_devices(const std::vector<BenchReport>& reports);

}  // namespace cudaconv
