#include "core/auto_select.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/border.hpp"
#include "filters/rank1.hpp"

namespace cudaconv {
bool separable_ahead_of_fast(const Job& job) {
    const Filter& f = job.params.filter;
    if (f.taps.empty() || !separate(f).has_value()) return false;
    const bool gray = job.src.channels == 1;
    const int side = std::max(f.width, f.height);
    const bool f32_gray = job.src.depth == Depth::f32 && gray && side >= kSeparableFirstSideF32;
    // fast-separable's tensor-core path takes u8 jobs whose border fits a u8.
    const bool u8 =
        job.src.depth == Depth::u8 && border_fits_u8(job.params.border, job.params.border_value) &&
        side >= (job.src.channels == 3 ? kSeparableFirstSideRgbU8 : kSeparableFirstSideU8);
    return f32_gray || u8;
}

int fast_separable_rank(const Job& job) {
    return separable_ahead_of_fast(job) ? kRankFast - 1 : kRankFastSeparable;
}

bool fft_ahead_of_ladder(const Job& job) {
    const Filter& f = job.params.filter;
    if (f.taps.empty() || separate(f).has_value()) return false;
    return job.dst.depth != Depth::f32 && f.taps.size() > kFftAheadOfLadderTaps;
}

int fft_rank(const Job& job) { return fft_ahead_of_ladder(job) ? kRankSeparable - 1 : kRankFft; }

namespace {

// The candidates auto tries for `job`, in rank order.
std::vector<Backend*> ranked(const Job& job, const std::vector<Backend*>& candidates) {
    std::vector<std::pair<int, Backend*>> ranks;
    for (Backend* b : candidates) {
        if (const std::optional<int> rank = b->auto_rank(job)) ranks.emplace_back(*rank, b);
    }
    std::stable_sort(ranks.begin(), ranks.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<Backend*> order;
    for (const auto& [rank, b] : ranks) order.push_back(b);
    return order;
}

}  // namespace

AutoChoice choose_variant(const Job& job, const std::vector<Backend*>& candidates,
                          const DeviceContext& device) {
    std::string refusals;  // every variant passed over, for the log and errors
    for (Backend* backend : ranked(job, candidates)) {
        const std::string_view wanted = backend->name();
        if (backend->uses_cuda() && !device.has_cuda_device) continue;
        const Support support = backend->can_run(job);
        if (!support.ok) {
            refusals += "; " + std::string(wanted) + " refused: " + support.reason;
            continue;
        }
        std::string reason;
        if (backend->uses_cuda()) {
            reason = "fastest CUDA variant that can run this job";
        } else if (!device.has_cuda_device) {
            reason = "no CUDA device (" + device.no_device_reason + "), so the CPU";
        } else {
            reason = "no CUDA variant can run this job, so the CPU";
        }
        return {backend, reason + refusals};
    }
    return {nullptr, "no variant can run this job" + refusals};
}

double estimated_cpu_ms(std::int64_t samples, std::size_t taps, unsigned cores) {
    const double work =
        static_cast<double>(samples) * (static_cast<double>(taps) + kCpuSampleOverhead);
    return 1000.0 * work / (kCpuTapsPerSecondPerCore * std::max(1u, cores));
}

std::optional<double> cpu_ms_before_cuda_starts(std::int64_t samples, std::size_t taps,
                                                unsigned cores, int runs) {
    const double ms = std::max(1, runs) * estimated_cpu_ms(samples, taps, cores);
    if (ms >= kCudaStartupMs) return std::nullopt;
    return ms;
}

AutoChoice cpu_for_one_image(const Job& job, const std::vector<Backend*>& candidates,
                             unsigned cores, int runs) {
    const auto it = std::find_if(candidates.begin(), candidates.end(),
                                 [](Backend* b) { return b->name() == "cpu"; });
    if (it == candidates.end() || !(*it)->can_run(job).ok) return {};
    const std::int64_t samples = job.src.width * job.src.height * job.filtered_channels();
    const std::optional<double> ms =
        cpu_ms_before_cuda_starts(samples, job.params.filter.taps.size(), cores, runs);
    if (!ms) return {};
    return {*it, fmt::format("one image: the CPU should take about {:.0f} ms on {} cores, less "
                             "than CUDA's start-up (about {:.0f} ms)",
                             *ms, std::max(1u, cores), kCudaStartupMs)};
}

}  // namespace cudaconv
