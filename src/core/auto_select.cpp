#include "core/auto_select.hpp"

#include <algorithm>
#include <limits>

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

double estimated_decode_ms(DecodeKind kind, std::int64_t pixels, std::int64_t decoded_bytes) {
    switch (kind) {
        case DecodeKind::jpeg: return 1e-6 * kJpegDecodeNsPerPixel * static_cast<double>(pixels);
        case DecodeKind::png:
            return 1e-6 * kPngDecodeNsPerByte * static_cast<double>(decoded_bytes);
        case DecodeKind::pfm:
            return 1e-6 * kPfmDecodeNsPerByte * static_cast<double>(decoded_bytes);
        case DecodeKind::other: return 0.0;
    }
    return 0.0;
}

namespace {

// The device's time for one filtering of the job (kGpuTapsPerMs).
double gpu_run_ms(const Job& job) {
    const Filter& f = job.params.filter;
    const double taps = separate(f).has_value() ? static_cast<double>(f.width + f.height)
                                                : static_cast<double>(f.taps.size());
    const double outputs =
        static_cast<double>(job.dst.width * job.dst.height * job.filtered_channels());
    return std::max(0.0, outputs) * taps / kGpuTapsPerMs;
}

double image_bytes(const ConstImageView& v) {
    return static_cast<double>(v.packed_row_bytes()) * static_cast<double>(v.height);
}

// The `cpu` variant among the candidates, or nullptr.
Backend* cpu_candidate(const std::vector<Backend*>& candidates) {
    const auto it = std::find_if(candidates.begin(), candidates.end(),
                                 [](Backend* b) { return b->name() == "cpu"; });
    return it == candidates.end() ? nullptr : *it;
}

}  // namespace

OneImageCosts one_image_costs(const Job& job, const Backend& cpu, unsigned threads, int runs,
                              double decode_ms) {
    runs = std::max(1, runs);
    OneImageCosts costs;
    costs.cpu_ms =
        runs * cpu.estimated_ms(job, threads).value_or(std::numeric_limits<double>::infinity());
    const double transfers =
        (image_bytes(job.src) + image_bytes(as_const(job.dst))) / kHostDeviceBytesPerMs;
    costs.cuda_ms = std::max(0.0, kCudaReadyMs - decode_ms) + kCudaFirstRunMs + transfers +
                    (runs - 1) * gpu_run_ms(job) + kCudaTeardownMs;
    return costs;
}

AutoChoice cpu_for_one_image(const Job& job, const std::vector<Backend*>& candidates,
                             unsigned threads, int runs, double decode_ms) {
    Backend* cpu = cpu_candidate(candidates);
    if (cpu == nullptr || !cpu->can_run(job).ok) return {};
    const OneImageCosts costs = one_image_costs(job, *cpu, threads, runs, decode_ms);
    if (!(costs.cpu_ms < costs.cuda_ms)) return {};
    return {cpu, fmt::format("one image: the CPU should take about {:.1f} ms on {} threads, "
                             "less than CUDA's start-up, transfers and teardown (about {:.0f} ms)",
                             costs.cpu_ms, std::max(1u, threads), costs.cuda_ms)};
}

AutoChoice cpu_for_one_image(const std::vector<Job>& steps, const std::vector<Backend*>& candidates,
                             unsigned threads, int runs, double decode_ms) {
    if (steps.size() == 1)
        return cpu_for_one_image(steps.front(), candidates, threads, runs, decode_ms);
    Backend* cpu = cpu_candidate(candidates);
    if (cpu == nullptr || steps.empty()) return {};
    // The CPU's time is every step's; CUDA's is the first step's costs with
    // the image's transfers, the later steps' device time next to nothing.
    double cpu_ms = 0.0;
    for (const Job& step : steps) {
        if (!cpu->can_run(step).ok) return {};
        cpu_ms += one_image_costs(step, *cpu, threads, runs, decode_ms).cpu_ms;
    }
    Job whole = steps.front();
    whole.dst = steps.back().dst;
    const double cuda_ms = one_image_costs(whole, *cpu, threads, runs, decode_ms).cuda_ms;
    if (!(cpu_ms < cuda_ms)) return {};
    return {cpu, fmt::format("one image: the CPU should take about {:.1f} ms for its {} filters "
                             "on {} threads, less than CUDA's start-up, transfers and "
                             "teardown (about {:.0f} ms)",
                             cpu_ms, steps.size(), std::max(1u, threads), cuda_ms)};
}

}  // namespace cudaconv
