#include "bench/runner.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <optional>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "bench/random_data.hpp"
#include "bench/reference.hpp"
#include "core/tolerance.hpp"
#include "bench/verify.hpp"
#include "io/image_io.hpp"
#include "kernels/runtime/copy_bandwidth.hpp"
#include "kernels/runtime/device_info.hpp"
#include "kernels/runtime/device_scope.hpp"

namespace cudaconv {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string local_date() {
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%d %H:%M %Z", &local);
    return text;
}

// The device and its copy bandwidth, probed only when a CUDA variant is
// selected (probing initialises CUDA).
BenchContext make_context(const BenchPlan& plan) {
    BenchContext c;
    c.date = local_date();
    c.warmup = plan.warmup;
    c.repeat = plan.repeat;
    c.verify = plan.verify;
    c.device_timing = plan.device_timing;
    c.border = plan.border;
    c.cpu_budget_s = plan.cpu_budget_s;
    c.cuda_wanted = std::any_of(plan.variants.begin(), plan.variants.end(),
                                [](const Backend* b) { return b->uses_cuda(); });
    if (!c.cuda_wanted) return c;
    const DeviceProbe& probe = probe_devices();
    if (probe.devices.empty()) {
        c.device_problem = probe.problem;
        return c;
    }
    // The calling thread's device (bench --devices runs a thread a device),
    // else the first: current_device()'s choice, which src/ cannot call
    // (kernels/runtime/cuda_backend.hpp is not in a build without CUDA).
    const DeviceInfo* chosen = find_device(probe, thread_device());
    const DeviceInfo& device = chosen != nullptr ? *chosen : probe.devices.front();
    c.device_name = device.name;
    c.device_index = device.index;
    c.rotate_bytes = kRotateL2Multiple * device.l2_bytes;
    try {
        const CopyBandwidth copy = measure_copy_bandwidth();
        c.copy_gb_per_s = copy.gb_per_s;
        c.copy_bytes = copy.bytes;
        spdlog::info("{}: device-to-device copy {:.0f} GB/s (read + write, {} MiB, median "
                     "{:.3f} ms)",
                     device.name, copy.gb_per_s, copy.bytes >> 20, copy.median_ms);
    } catch (const std::exception& e) {
        spdlog::warn("copy bandwidth not measured: {}", e.what());
    }
    return c;
}

ConvParams params_for(const Filter& filter, const BenchPlan& plan) {
    ConvParams p = centred_params(filter);
    p.border = plan.border;
    p.border_value = plan.border_value;
    p.delta = filter.delta;  // a .mat file's offset, as the CLI folds it in
    return p;
}

// 0xFF bytes are 255, 65535 or NaN: a sample a variant does not write
// cannot pass for the previous variant's output.
void poison(cv::Mat& image) { std::memset(image.data, 0xFF, image.total() * image.elemSize()); }

// One run per call, so a slow variant stops at the row's time budget.
RunTimings time_cpu_variant(Backend& variant, const Job& job, const BenchPlan& plan) {
    const auto start = Clock::now();
    for (int i = 0; i < plan.warmup && seconds_since(start) < plan.cpu_budget_s; ++i) {
        variant.run(job, RunOptions{});
    }
    RunTimings timings;
    for (int i = 0; i < plan.repeat; ++i) {
        const RunTimings one = variant.run(job, RunOptions{});
        timings.filter_ms.insert(timings.filter_ms.end(), one.filter_ms.begin(),
                                 one.filter_ms.end());
        timings.path = one.path;  // a composite's choice, for --json's `path`
        if (seconds_since(start) >= plan.cpu_budget_s) break;
    }
    return timings;
}

void fill_throughput(BenchRow& row, const BenchContext& context) {
    if (row.time.median_ms <= 0.0) return;
    const double seconds = row.time.median_ms * 1e-3;
    const double sample_bytes = static_cast<double>(depth_bytes(row.depth)) * row.size.channels;
    const double in_bytes = static_cast<double>(row.size.width * row.size.height) * sample_bytes;
    const double out_pixels = static_cast<double>(row.out_width * row.out_height);
    row.mpix_per_s = out_pixels / seconds * 1e-6;
    row.gb_per_s = (in_bytes + out_pixels * sample_bytes) / seconds * 1e-9;
    if (row.uses_cuda && context.copy_gb_per_s && *context.copy_gb_per_s > 0.0) {
        row.copy_share = row.gb_per_s / *context.copy_gb_per_s;
    }
}

struct Reference {
    ReferenceChoice choice;
    cv::Mat output;
    Tolerance own;  // the reference's own bound against the exact result
};

Reference compute_reference(const Job& job, const cv::Mat& src, const std::string& what) {
    Reference ref;
    ref.choice = choose_reference(job);
    ref.output.create(static_cast<int>(job.dst.height), static_cast<int>(job.dst.width),
                      cv_type_of(job.dst.depth, job.dst.channels));
    const Job ref_job{view_of(src), view_of(ref.output), job.params};
    const auto start = Clock::now();
    try {
        ref.choice.backend->run(ref_job, RunOptions{});
    } catch (const std::exception& e) {
        throw std::runtime_error(fmt::format("{}: the reference {} failed: {}", what,
                                             ref.choice.backend->name(), e.what()));
    }
    ref.own = ref.choice.backend->tolerance(job);
    // A -v line, as the filter command's auto choice is: the table names
    // the reference already ("checked against ...").
    spdlog::debug("{}: reference {} ({}; {:.2f} s)", what, ref.choice.backend->name(),
                  ref.choice.why, seconds_since(start));
    return ref;
}

// The bench's own refusal: cpu-ref times only what it can check in seconds.
std::optional<std::string> bench_refusal(const Backend& variant, const Job& job) {
    if (variant.name() == kOracleName && tap_samples(job) > kMaxOracleTapSamples) {
        return fmt::format("bench: {} is timed up to {:.0e} taps x samples only (minutes "
                           "beyond); time it on a smaller --size",
                           kOracleName, kMaxOracleTapSamples);
    }
    return std::nullopt;
}

bool is_peer(const BenchPlan& plan, const Backend& b) {
    return std::find(plan.peers.begin(), plan.peers.end(), &b) != plan.peers.end();
}

void run_case(const BenchPlan& plan, BenchReport& report, const cv::Mat& src, const BenchSize& size,
              Depth depth, const Filter& filter) {
    const std::string what = fmt::format("{} {} {}", size.label(), depth_name(depth), filter.label);
    const ConvParams params = params_for(filter, plan);
    const Size2D out = output_size(size.width, size.height, params);

    BenchRow base;
    base.filter = filter.label;
    base.filter_width = filter.width;
    base.filter_height = filter.height;
    base.size = size;
    base.out_width = out.width;
    base.out_height = out.height;
    base.depth = depth;

    if (out.width <= 0 || out.height <= 0) {
        for (const Backend* variant : plan.variants) {
            BenchRow row = base;
            row.variant = std::string(variant->name());
            row.uses_cuda = variant->uses_cuda();
            row.peer = is_peer(plan, *variant);
            row.reason = "the filter is larger than the image: border valid leaves no output";
            report.rows.push_back(std::move(row));
        }
        return;
    }

    cv::Mat dst(static_cast<int>(out.height), static_cast<int>(out.width),
                cv_type_of(depth, size.channels));
    const Job job{view_of(src), view_of(dst), params};

    std::vector<Support> support;
    for (const Backend* variant : plan.variants) {
        const auto refusal = bench_refusal(*variant, job);
        support.push_back(refusal ? Support::no(*refusal) : variant->can_run(job));
    }
    const bool any_runs =
        std::any_of(support.begin(), support.end(), [](const Support& s) { return s.ok; });
    std::optional<Reference> ref;
    if (plan.verify && any_runs) ref = compute_reference(job, src, what);

    for (std::size_t v = 0; v < plan.variants.size(); ++v) {
        Backend& variant = *plan.variants[v];
        BenchRow row = base;
        row.variant = std::string(variant.name());
        row.uses_cuda = variant.uses_cuda();
        row.peer = is_peer(plan, variant);
        if (!support[v].ok) {
            row.status = RowStatus::refused;
            row.reason = support[v].reason;
            spdlog::debug("{} {}: refused: {}", what, row.variant, row.reason);
            report.rows.push_back(std::move(row));
            continue;
        }
        poison(dst);
        RunOptions options;
        options.warmup = plan.warmup;
        options.repeat = plan.repeat;
        options.rotate_bytes = report.context.rotate_bytes;
        options.hold_timed_launches = plan.device_timing;
        options.tuning = tuning_for(variant, plan.tuning);
        RunTimings timings;
        try {
            timings = variant.uses_cuda() ? variant.run(job, options)
                                          : time_cpu_variant(variant, job, plan);
        } catch (const std::exception& e) {
            row.status = RowStatus::error;
            row.reason = e.what();
            spdlog::error("{} {}: {}", what, row.variant, row.reason);
            report.rows.push_back(std::move(row));
            continue;
        }
        row.time = summarize_runs(timings.filter_ms);
        row.path = timings.path;
        fill_throughput(row, report.context);

        if (!ref) {
            row.status = RowStatus::unverified;
        } else {
            const Tolerance tolerance =
                against_reference(variant.tolerance(job), ref->own, ref->choice.exact);
            const Verdict verdict = verify_output(view_of(static_cast<const cv::Mat&>(ref->output)),
                                                  as_const(job.dst), tolerance);
            row.reference = std::string(ref->choice.backend->name());
            row.status = verdict.ok ? RowStatus::ok : RowStatus::wrong;
            if (!verdict.ok) {
                row.reason = verdict.describe();
                spdlog::error("{} {}: WRONG against {}: {}", what, row.variant, row.reference,
                              row.reason);
            } else if (&variant == ref->choice.backend && !ref->choice.exact) {
                row.reason = "is this case's reference (it is tested against cpu-ref)";
            }
            row.verdict = verdict;
        }
        spdlog::debug("{} {}: {} median {:.3f} ms of {}", what, row.variant,
                      status_name(row.status), row.time.median_ms, row.time.runs);
        report.rows.push_back(std::move(row));
    }
}

}  // namespace

std::string_view status_name(RowStatus status) {
    switch (status) {
        case RowStatus::ok: return "ok";
        case RowStatus::wrong: return "wrong";
        case RowStatus::refused: return "refused";
        case RowStatus::unverified: return "unverified";
        case RowStatus::error: return "error";
    }
    return "?";
}

TimingSummary summarize_runs(std::vector<double> runs_ms) {
    TimingSummary s;
    if (runs_ms.empty()) return s;
    std::sort(runs_ms.begin(), runs_ms.end());
    const std::size_t n = runs_ms.size();
    s.runs = static_cast<int>(n);
    s.median_ms = n % 2 ? runs_ms[n / 2] : 0.5 * (runs_ms[n / 2 - 1] + runs_ms[n / 2]);
    s.min_ms = runs_ms.front();
    s.max_ms = runs_ms.back();
    return s;
}

bool BenchReport::any_failure() const {
    return std::any_of(rows.begin(), rows.end(), [](const BenchRow& r) {
        return r.status == RowStatus::wrong || r.status == RowStatus::error;
    });
}

BenchReport run_bench(const BenchPlan& plan) {
    BenchReport report;
    report.context = make_context(plan);
    report.sizes = plan.sizes;
    report.depths = plan.depths;
    for (const Filter& f : plan.filters) report.filters.push_back(f.label);
    for (const Backend* b : plan.variants) report.variants.emplace_back(b->name());
    for (const Backend* b : plan.peers) report.peers.emplace_back(b->name());
    report.variants.insert(report.variants.end(), report.peers.begin(), report.peers.end());
    // The peers run as the variants do, after them.
    BenchPlan runs = plan;
    runs.variants.insert(runs.variants.end(), plan.peers.begin(), plan.peers.end());

    for (const Depth depth : plan.depths) {
        for (const BenchSize& size : plan.sizes) {
            const cv::Mat src = random_bench_image(size, depth);
            for (const Filter& filter : plan.filters) {
                run_case(runs, report, src, size, depth, filter);
            }
        }
    }
    return report;
}

}  // namespace cudaconv
