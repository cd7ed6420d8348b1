#pragma once
// A chain run as the command line plans it: where every step is on one
// variant (-k), as the one filter its steps equal where that variant runs
// the filter so (one_filter_step, core/chain_compose.hpp); else step by
// step (run_chain).
#include <optional>
#include <vector>

#include "core/chain.hpp"
#include "core/chain_compose.hpp"

namespace cudaconv::test {

struct PlannedChainRun {
    RunTimings timings;
    std::optional<ChainStep> one;  // the one filter that ran, where it did
};

inline PlannedChainRun run_planned_chain(const std::vector<ChainStep>& steps) {
    std::vector<ConvParams> params;
    std::vector<Job> jobs;
    for (const ChainStep& step : steps) {
        params.push_back(step.job.params);
        jobs.push_back(step.job);
    }
    bool one_variant = true;
    for (const ChainStep& step : steps) one_variant &= step.backend == steps.front().backend;
    const std::optional<ChainStep> one =
        one_variant ? one_filter_step(*steps.front().backend, jobs, composed_rank1_chain(params))
                    : std::nullopt;
    if (one) return {run_as_one_filter(*one, steps.size(), {}), one};
    return {run_chain(steps, {}), std::nullopt};
}

}  // namespace cudaconv::test
