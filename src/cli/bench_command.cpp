// `cudaconv bench`: parse the lists, run the plan, write the reports.
#include "cli/bench_command.hpp"

#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "batch/opencv_pool.hpp"
#include "bench/report.hpp"
#include "bench/runner.hpp"
#include "base/errors.hpp"
#include "cli/case_insensitive.hpp"
#include "core/json_text.hpp"
#include "io/image_io.hpp"

namespace cudaconv {
namespace {

constexpr const char* kBenchExamples = R"(Examples:
  cudaconv bench                        # the default tables, every variant
  cudaconv bench --size 4000x3000 -f edge -k all
  cudaconv bench --size 4000x3000x1 -f random:15,random:31 --depth f32 \
                 --json bench.json
  cudaconv bench --size 64x48 -f edge -k cpu-ref,cpu --warmup 0 --repeat 3 \
                 --csv -
  cudaconv bench --size 4000x3000 -f edge -k fast,fast.*   # and its paths
  cudaconv bench --size 4000x3000 -f edge -k fast.strips --param band_rows=16
  cudaconv bench --size 4000x3000 -f gaussian:sigma=3 -k cpu --peer opencv

Sizes are WxH (RGB) or WxHxC (C = 1, 3 or 4). Filters are anything -f
accepts, or random:N / random:WxH (dense random taps, fixed seed, summing
to 1). Every timed output is checked against cpu-ref (cpu.direct beyond
3e8 taps x samples): a wrong one shows WRONG instead of a time, and bench
exits 1. --peer opencv times OpenCV beside them.)";

bool names_file(const std::string& path) { return !path.empty() && path != kStdStream; }

// Checked before the bench, which may take minutes: a report file in a
// missing folder would fail only at the end, and one that exists is kept
// unless --overwrite.
void check_report_path(const std::string& option, const std::string& path, bool overwrite) {
    if (!names_file(path)) return;
    const std::string reason =
        unwritable_folder_reason(std::filesystem::path(path).parent_path().string());
    if (!reason.empty()) throw UsageError(fmt::format("{} {}: {}", option, path, reason));
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
        throw UsageError(fmt::format("{} {}: is a folder", option, path));
    }
    if (!overwrite && std::filesystem::exists(std::filesystem::symlink_status(path, ec))) {
        throw UsageError(fmt::format(
            "{} {}: exists already; nothing was done (--overwrite replaces it)", option, path));
    }
}

void write_text(const std::string& path, const std::string& text) {
    write_file_atomically(path, std::vector<std::uint8_t>(text.begin(), text.end()));
}

BenchPlan make_plan(const BenchOptions& o) {
    BenchPlan plan;
    plan.sizes = parse_bench_sizes(o.sizes);
    plan.filters = parse_bench_filters(o.filters);
    plan.depths = parse_bench_depths(o.depths);
    plan.variants = select_bench_variants(o.variants);
    bool forces_zero = false;
    const auto border = parse_border(o.border, &forces_zero);
    if (!border) {
        throw UsageError(fmt::format("--border \"{}\": unknown border mode (reflect101, "
                                     "reflect, replicate, constant, wrap, valid)",
                                     o.border));
    }
    plan.border = *border;
    plan.warmup = o.warmup;
    plan.repeat = o.repeat;
    plan.verify = !o.no_verify;
    plan.device_timing = o.timing == "device";
    for (const std::string& text : o.params) {
        try {
            const auto [name, value] = parse_tuning_param(text);
            plan.tuning.set(name, value);
        } catch (const std::invalid_argument& e) {
            throw UsageError(e.what());
        }
    }
    check_bench_tuning(plan.tuning, plan.variants);
    if (!o.peers.empty()) plan.peers = select_bench_peers(o.peers);
    return plan;
}

}  // namespace

void add_bench_options(CLI::App& app, BenchOptions& o) {
    app.footer(kBenchExamples);
    app.add_option("--size", o.sizes, "Image sizes, a comma list of WxH or WxHxC")
        ->capture_default_str();
    app.add_option("-f,--filter", o.filters,
                   "Filter specs, a comma list (as -f of the main command, or random:N)")
        ->capture_default_str();
    app.add_option("-k,--kernel", o.variants, "Variants: all, or a comma list of names")
        ->transform(ascii_lower)
        ->capture_default_str();
    app.add_option("--peer", o.peers,
                   "Peers timed beside the variants, on the same inputs: opencv (cv::filter2D, "
                   "or cv::sepFilter2D for a rank-1 filter)");
    app.add_option("--depth", o.depths, "Sample depths of input and output: u8, u16, f32")
        ->capture_default_str();
    app.add_option("--border", o.border, "Border mode")->capture_default_str();
    app.add_option("--warmup", o.warmup, "Untimed runs before the timed ones")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
    app.add_option("--repeat", o.repeat, "Timed runs; the median is shown")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    app.add_option("--timing", o.timing,
                   "CUDA rows: device (each timed launch queued behind a kernel that holds the "
                   "stream until the host has queued it: the device's time alone; a row's "
                   "first launch, which may load kernels, is never held) or launch (events "
                   "around each launch as the host submits it, its latency included)")
        ->check(CLI::IsMember({"device", "launch"}))
        ->capture_default_str();
    app.add_option("--csv", o.csv_path, "Write one CSV row per result to FILE (- for stdout)");
    app.add_option("--json", o.json_path, "Write the results as JSON to FILE (- for stdout)");
    app.add_flag("--overwrite", o.overwrite,
                 "Let --csv and --json replace files that exist (default: refuse to start)");
    app.add_option("--param", o.params,
                   "NAME=VALUE: a tuning parameter of the variants (list kernels shows each "
                   "variant's), in place of its rule's choice; repeatable");
    // Not built: refused with the reason, and left out of --help.
    app.add_option("--devices", o.devices, "")->group("");
    app.add_flag("--no-verify", o.no_verify,
                 "Skip checking outputs against the reference (times are marked unverified)");
}

int run_bench_command(const BenchOptions& o) {
    if (o.devices) {
        throw UsageError("bench --devices is not built yet: bench times one device, the first "
                         "(CUDA_VISIBLE_DEVICES=N cudaconv bench ... times device N; docs/SPEC.md, "
                         "\"Planned\")");
    }
    if (o.csv_path == kStdStream && o.json_path == kStdStream) {
        throw UsageError("--csv - and --json - would both write to stdout");
    }
    check_report_path("--csv", o.csv_path, o.overwrite);
    check_report_path("--json", o.json_path, o.overwrite);
    if (names_file(o.csv_path) && names_file(o.json_path) &&
        std::filesystem::weakly_canonical(std::filesystem::absolute(o.csv_path)) ==
            std::filesystem::weakly_canonical(std::filesystem::absolute(o.json_path))) {
        throw UsageError(fmt::format("--csv and --json both name {}", o.csv_path));
    }
    const BenchPlan plan = make_plan(o);

    start_opencv_pool();  // the cpu variant's threads, made before they are needed
    const BenchReport report = run_bench(plan);

    // The table goes to stdout unless a report does.
    const bool report_on_stdout = o.csv_path == kStdStream || o.json_path == kStdStream;
    print_bench_tables(report_on_stdout ? stderr : stdout, report);
    std::fflush(report_on_stdout ? stderr : stdout);
    if (!o.csv_path.empty()) write_text(o.csv_path, bench_csv(report));
    if (!o.json_path.empty()) write_text(o.json_path, json_text(bench_json(report), 2) + "\n");
    return report.any_failure() ? kExitWorkFailed : kExitOk;
}

}  // namespace cudaconv
