// `cudaconv list filters|kernels|devices`: what this build can do.
#include "cli/list_command.hpp"

#include <fmt/format.h>

#include "base/wrap.hpp"
#include "variants/registry.hpp"
#include "filters/spec.hpp"
#include "kernels/runtime/device_info.hpp"

namespace cudaconv {
namespace {

void print_taps(const Filter& f) {
    for (int y = 0; y < f.height; ++y) {
        fmt::print("      ");
        for (int x = 0; x < f.width; ++x) fmt::print(" {:>9.6g}", f.at(x, y));
        fmt::print("\n");
    }
}

// Each listing keeps to an 80-column terminal: a description too long for
// its line goes on below, under where it began (base/wrap.hpp).
void print_wrapped(const std::string& lead, const std::string& text, int indent) {
    fmt::print("{}\n", wrap_hanging(lead, text, indent));
}

int list_filters() {
    // Taps are printed for small filters (7 columns of 10 fit in 80);
    // larger ones would fill the screen.
    constexpr int kMaxPrintedSide = 7;
    constexpr int kSyntaxColumns = 22;
    for (const NamedFilterInfo& info : named_filters()) {
        print_wrapped(fmt::format("{:<{}} ", info.syntax, kSyntaxColumns), info.description,
                      kSyntaxColumns + 1);
        const Filter f = parse_filter_spec(info.example);
        fmt::print("    {} ({}x{}{}):\n", info.example, f.width, f.height,
                   f.delta != 0.0 ? fmt::format(", offset {}", f.delta) : "");
        if (f.width <= kMaxPrintedSide && f.height <= kMaxPrintedSide) print_taps(f);
        else fmt::print("      (taps not shown for filters over {0}x{0})\n", kMaxPrintedSide);
    }
    fmt::print("\n");
    print_wrapped("Also: ",
                  "WxH:v,v,... (inline, row-major), a filter file (-f path, or -f @path): *.mat "
                  "is libvips' format, anything else one row per line, numbers separated by "
                  "spaces, tabs or commas, # comments.",
                  6);
    return 0;
}

// Every variant, a composite's named paths indented under it, each with
// the tuning parameters bench --param may set.
int list_kernels() {
    constexpr int kNameColumns = 23;
    constexpr int kSummaryColumn = kNameColumns + 7;  // after " CUDA "
    constexpr int kParamColumn = kSummaryColumn + 2;
    for (const auto& b : all_backends()) {
        const bool path = !b->parent().empty();
        const std::string name = (path ? "  " : "") + std::string(b->name());
        print_wrapped(
            fmt::format("{:<{}} {:<5} ", name, kNameColumns, b->uses_cuda() ? "CUDA" : "CPU"),
            std::string(b->summary()), kSummaryColumn);
        if (!path) continue;
        for (const TuningParam& p : b->tuning_params()) {
            print_wrapped(fmt::format("{:<{}}--param {}: ", "", kParamColumn, p.name),
                          fmt::format("{} ({} to {})", p.meaning, p.min, p.max), kParamColumn + 2);
        }
    }
    return 0;
}

int list_devices() {
    const DeviceProbe& probe = probe_devices();
    if (probe.devices.empty()) {
        print_wrapped(
            "no CUDA device: ", fmt::format("{} (the CPU variants still run)", probe.problem), 2);
        return 0;
    }
    for (const DeviceInfo& d : probe.devices) {
        const std::string lead = fmt::format("{}: ", d.index);
        print_wrapped(lead,
                      fmt::format("{}, compute capability {}.{}, {} SMs, {:.1f} GiB, L2 {:.0f} MiB",
                                  d.name, d.cc_major, d.cc_minor, d.multiprocessors,
                                  static_cast<double>(d.global_memory_bytes) / (1u << 30),
                                  static_cast<double>(d.l2_bytes) / (1u << 20)),
                      static_cast<int>(lead.size()));
    }
    return 0;
}

}  // namespace

void add_list_options(CLI::App& app, ListOptions& options) {
    app.add_option("what", options.what, "filters, kernels or devices")
        ->required()
        ->check(CLI::IsMember({"filters", "kernels", "devices"}));
}

int run_list_command(const ListOptions& options) {
    if (options.what == "filters") return list_filters();
    if (options.what == "kernels") return list_kernels();
    return list_devices();
}

}  // namespace cudaconv
