#pragma once
// Runs a bench: for each depth x size x filter, one seeded input, one
// reference output, then every selected variant, timed and verified.
#include <vector>

#include "bench/cases.hpp"
#include "bench/results.hpp"
#include "core/backend.hpp"

namespace cudaconv {

// CPU variants time with a steady clock, one run per call; a row stops
// warming up and repeating once it has run this long (one timed run at
// least), so `-k all` on big images still ends: cpu-ref needs seconds a run.
constexpr double kCpuRowBudgetSeconds = 2.0;

// CUDA inputs rotate over twice the L2, as CUTLASS's profiler does: a
// launch never finds its input left in the L2 by the one before.
constexpr std::size_t kRotateL2Multiple = 2;

struct BenchPlan {
    std::vector<BenchSize> sizes;
    std::vector<Filter> filters;
    std::vector<Depth> depths;
    std::vector<Backend*> variants;
    // Peers (bench/opencv_peer.hpp), timed and verified after the variants
    // and marked as peers in the report.
    std::vector<Backend*> peers;
    BorderMode border = BorderMode::reflect101;
    double border_value = 0.0;
    int warmup = 3;
    int repeat = 20;
    bool verify = true;
    // CUDA rows: the device's time alone (RunOptions::hold_timed_launches),
    // or events around each launch as the host submits it, the host's launch
    // latency included (how the NPP peer program times NPP).
    bool device_timing = true;
    double cpu_budget_s = kCpuRowBudgetSeconds;
    // --param: each variant gets the values it reads (tuning_for).
    Tuning tuning;
};

// Never throws for a variant's failure (that row says `error`); throws
// only when the reference itself cannot be computed.
BenchReport run_bench(const BenchPlan& plan);

}  // namespace cudaconv
