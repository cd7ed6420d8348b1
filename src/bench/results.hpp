#pragma once
// What a bench measured: one row per (variant, size, filter, depth), and
// the context every row is read in (device, copy bandwidth, settings).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/cases.hpp"
#include "bench/verify.hpp"
#include "core/types.hpp"

namespace cudaconv {

// ok: timed and verified. wrong: timed, output over tolerance (no time is
// shown). refused: the variant's can_run (or the bench) said no.
// unverified: timed under --no-verify. error: the run threw.
enum class RowStatus { ok, wrong, refused, unverified, error };
std::string_view status_name(RowStatus status);

struct TimingSummary {
    int runs = 0;
    double median_ms = 0.0;
    double min_ms = 0.0;
    double max_ms = 0.0;
};
TimingSummary summarize_runs(std::vector<double> runs_ms);

struct BenchRow {
    std::string variant;
    std::string path;  // the named path a composite ran (RunTimings::path)
    bool uses_cuda = false;
    bool peer = false;   // another library's row (--peer), not a cudaconv variant
    std::string filter;  // the spec, e.g. "gaussian:5"
    int filter_width = 0;
    int filter_height = 0;
    BenchSize size;  // the input
    std::int64_t out_width = 0;
    std::int64_t out_height = 0;
    Depth depth = Depth::u8;  // input and output

    RowStatus status = RowStatus::refused;
    std::string reason;     // why refused, wrong or failed
    std::string reference;  // the variant it was checked against
    std::optional<Verdict> verdict;

    TimingSummary time;
    double mpix_per_s = 0.0;           // output pixels per second, 1e6
    double gb_per_s = 0.0;             // input plus output bytes per second, 1e9
    std::optional<double> copy_share;  // gb_per_s over the device's copy GB/s (CUDA rows)

    bool timed() const { return status == RowStatus::ok || status == RowStatus::unverified; }
};

struct BenchContext {
    std::string date;          // local "YYYY-MM-DD HH:MM TZ", when the bench started
    bool cuda_wanted = false;  // some selected variant uses CUDA
    std::string device_name;   // empty: no CUDA device
    int device_index = -1;     // the device timed, by CUDA's number; -1: none
    std::string device_problem;
    std::optional<double> copy_gb_per_s;
    std::size_t copy_bytes = 0;
    std::size_t rotate_bytes = 0;
    int warmup = 0;
    int repeat = 0;
    bool verify = true;
    bool device_timing = true;  // BenchPlan::device_timing
    BorderMode border = BorderMode::reflect101;
    double cpu_budget_s = 0.0;
};

struct BenchReport {
    BenchContext context;
    std::vector<BenchSize> sizes;
    std::vector<std::string> filters;  // labels, in the order given
    std::vector<Depth> depths;
    std::vector<std::string> variants;  // the peers' names last
    std::vector<std::string> peers;
    std::vector<BenchRow> rows;

    // Some variant gave a wrong output or failed: bench exits 1.
    bool any_failure() const;
};

}  // namespace cudaconv
