// `cudaconv list filters|kernels|devices`: what this build can do.
#include "cli/list_command.hpp"

#include <fmt/format.h>

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

int list_filters() {
    // Taps are printed for small filters; larger ones would fill the screen.
    constexpr int kMaxPrintedSide = 7;
    for (const NamedFilterInfo& info : named_filters()) {
        fmt::print("{:<22} {}\n", info.syntax, info.description);
        const Filter f = parse_filter_spec(info.example);
        fmt::print("    {} ({}x{}{}):\n", info.example, f.width, f.height,
                   f.delta != 0.0 ? fmt::format(", offset {}", f.delta) : "");
        if (f.width <= kMaxPrintedSide && f.height <= kMaxPrintedSide) print_taps(f);
        else fmt::print("      (taps not shown for filters over {0}x{0})\n", kMaxPrintedSide);
    }
    fmt::print("\nAlso: WxH:v,v,... (inline, row-major), a filter file (-f path, or -f @path): "
               "*.mat is libvips' format,\nanything else one row per line, numbers separated by "
               "spaces, tabs or commas, # comments.\n");
    return 0;
}

// Every variant, a composite's named paths indented under it, each with
// the tuning parameters bench --param may set.
int list_kernels() {
    for (const auto& b : all_backends()) {
        const bool path = !b->parent().empty();
        const std::string name = (path ? "  " : "") + std::string(b->name());
        fmt::print("{:<23} {:<5} {}\n", name, b->uses_cuda() ? "CUDA" : "CPU", b->summary());
        if (!path) continue;
        for (const TuningParam& p : b->tuning_params()) {
            fmt::print("{:<29}   --param {}: {} ({} to {})\n", "", p.name, p.meaning, p.min, p.max);
        }
    }
    return 0;
}

int list_devices() {
    const DeviceProbe& probe = probe_devices();
    if (probe.devices.empty()) {
        fmt::print("no CUDA device: {} (the CPU variants still run)\n", probe.problem);
        return 0;
    }
    for (const DeviceInfo& d : probe.devices) {
        fmt::print("{}: {}, compute capability {}.{}, {} SMs, {:.1f} GiB, L2 {:.0f} MiB\n", d.index,
                   d.name, d.cc_major, d.cc_minor, d.multiprocessors,
                   static_cast<double>(d.global_memory_bytes) / (1u << 30),
                   static_cast<double>(d.l2_bytes) / (1u << 20));
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
