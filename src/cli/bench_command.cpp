// `cudaconv bench`: parse the lists, run the plan, write the reports.
#include "cli/bench_command.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "batch/devices.hpp"
#include "batch/opencv_pool.hpp"
#include "bench/report.hpp"
#include "bench/runner.hpp"
#include "base/errors.hpp"
#include "base/printable.hpp"
#include "cli/case_insensitive.hpp"
#include "cli/number_options.hpp"
#include "core/json_text.hpp"
#include "io/image_io.hpp"
#include "kernels/runtime/device_info.hpp"
#include "kernels/runtime/device_scope.hpp"

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
  cudaconv bench --size 4000x3000 -f edge -k fast --devices all   # each GPU

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
        ->check(non_negative_integer())
        ->capture_default_str();
    app.add_option("--repeat", o.repeat, "Timed runs; the median is shown")
        ->check(positive_integer())
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
    app.add_option("--devices", o.devices,
                   "Time the CUDA variants on each of these GPUs in turn: all, a count N (the "
                   "first N), or device numbers 0,2 (default: the first); the CPU rows once")
        ->option_text("all|N|LIST");
    app.add_flag("--no-verify", o.no_verify,
                 "Skip checking outputs against the reference (times are marked unverified)");
}

namespace {

// bench --devices: the devices to time, each in turn, checked before any
// work (batch/devices.hpp's values; a count or list the machine lacks, or
// no CUDA variant to time, is exit 2).
std::vector<int> bench_devices(const BenchOptions& o, const BenchPlan& plan) {
    if (!o.devices) return {};
    const DeviceRequest request = parse_devices(*o.devices);
    const std::string value = printable(*o.devices);
    if (std::none_of(plan.variants.begin(), plan.variants.end(),
                     [](const Backend* b) { return b->uses_cuda(); })) {
        throw UsageError(
            fmt::format("--devices \"{}\": no CUDA variant among -k's to time on a device", value));
    }
    std::vector<int> devices =
        choose_devices(request, device_numbers(probe_devices()), probe_devices().problem);
    if (devices.empty()) {
        throw UsageError(fmt::format("--devices \"{}\": no CUDA device here ({})", value,
                                     probe_devices().problem));
    }
    return devices;
}

// Each device's bench, in turn, on a thread bound to it (a thread's CUDA
// state belongs to one device: kernels/runtime/device_scope.hpp). The CPU
// rows and the peers are timed once, with the first device's.
std::vector<BenchReport> run_bench_on(const BenchPlan& plan, const std::vector<int>& devices) {
    std::vector<BenchReport> reports;
    for (std::size_t k = 0; k < devices.size(); ++k) {
        BenchPlan own = plan;
        if (k > 0) {
            own.variants.erase(std::remove_if(own.variants.begin(), own.variants.end(),
                                              [](const Backend* b) { return !b->uses_cuda(); }),
                               own.variants.end());
            own.peers.clear();
        }
        std::exception_ptr failure;
        BenchReport report;
        std::thread thread([&, device = devices[k]] {
            try {
                set_thread_device(device);
                report = run_bench(own);
            } catch (...) {
                failure = std::current_exception();
            }
        });
        thread.join();
        if (failure) std::rethrow_exception(failure);
        reports.push_back(std::move(report));
    }
    return reports;
}

}  // namespace

int run_bench_command(const BenchOptions& o) {
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
    const std::vector<int> devices = bench_devices(o, plan);

    start_opencv_pool();  // the cpu variant's threads, made before they are needed
    const bool report_on_stdout = o.csv_path == kStdStream || o.json_path == kStdStream;
    if (!devices.empty()) {
        const std::vector<BenchReport> reports = run_bench_on(plan, devices);
        for (const BenchReport& report : reports) {
            print_bench_tables(report_on_stdout ? stderr : stdout, report);
        }
        std::fflush(report_on_stdout ? stderr : stdout);
        if (!o.csv_path.empty()) write_text(o.csv_path, bench_csv_devices(reports));
        if (!o.json_path.empty()) {
            write_text(o.json_path, json_text(bench_json_devices(reports), 2) + "\n");
        }
        return std::any_of(reports.begin(), reports.end(),
                           [](const BenchReport& r) { return r.any_failure(); })
                   ? kExitWorkFailed
                   : kExitOk;
    }
    const BenchReport report = run_bench(plan);

    // The table goes to stdout unless a report does.
    print_bench_tables(report_on_stdout ? stderr : stdout, report);
    std::fflush(report_on_stdout ? stderr : stdout);
    if (!o.csv_path.empty()) write_text(o.csv_path, bench_csv(report));
    if (!o.json_path.empty()) write_text(o.json_path, json_text(bench_json(report), 2) + "\n");
    return report.any_failure() ? kExitWorkFailed : kExitOk;
}

}  // namespace cudaconv
