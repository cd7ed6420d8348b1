#include "core/auto_select.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/border.hpp"
#include "filters/rank1.hpp"

namespace cudaconv {
namespace {

// Moves `name` to just before `before` in list (both present).
void move_before(std::vector<std::string_view>& list, std::string_view name,
                 std::string_view before) {
    const auto from = std::find(list.begin(), list.end(), name);
    if (from == list.end()) return;
    list.erase(from);
    list.insert(std::find(list.begin(), list.end(), before), name);
}

}  // namespace

std::vector<std::string_view> auto_preference(const Job& job) {
    std::vector<std::string_view> list(kAutoPreference.begin(), kAutoPreference.end());
    const Filter& f = job.params.filter;
    if (f.taps.empty()) return list;
    const bool rank1 = separate(f).has_value();
    const bool gray = job.src.channels == 1;
    const int side = std::max(f.width, f.height);
    const bool f32_gray = job.src.depth == Depth::f32 && gray && side >= kSeparableFirstSideF32;
    // fast-separable's tensor-core path takes u8 jobs whose border fits a u8.
    const bool u8 = job.src.depth == Depth::u8 &&
                    border_fits_u8(job.params.border, job.params.border_value) &&
                    side >= (job.src.channels == 3 ? kSeparableFirstSideRgbU8
                                                   : kSeparableFirstSideU8);
    if (rank1 && (f32_gray || u8)) move_before(list, "fast-separable", "fast");
    const bool integer_output = job.dst.depth != Depth::f32;
    if (!rank1 && integer_output && f.taps.size() > kFftAheadOfLadderTaps) {
        move_before(list, "fft", "separable");
    }
    return list;
}

AutoChoice choose_variant(const Job& job, const std::vector<Backend*>& candidates,
                          const DeviceContext& device) {
    std::string refusals;  // every variant passed over, for the log and errors
    for (std::string_view wanted : auto_preference(job)) {
        const auto it = std::find_if(candidates.begin(), candidates.end(),
                                     [&](Backend* b) { return b->name() == wanted; });
        if (it == candidates.end()) continue;
        Backend* backend = *it;
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
    const double work = static_cast<double>(samples) * (static_cast<double>(taps) + kCpuSampleOverhead);
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
