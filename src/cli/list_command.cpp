// `cudaconv list filters|kernels|devices`: what this build can do.
#include "cli/list_command.hpp"

#include <array>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "base/edit_distance.hpp"
#include "base/errors.hpp"
#include "base/printable.hpp"
#include "base/wrap.hpp"
#include "cli/case_insensitive.hpp"
#include "variants/registry.hpp"
#include "filters/spec.hpp"
#include "kernels/runtime/device_info.hpp"
#include "variants/layer_registry.hpp"

namespace cudaconv {
namespace {

void print_taps(const Filter& f) {
    for (int y = 0; y < f.height; ++y) {
        fmt::print("      ");
        for (int x = 0; x < f.width; ++x) fmt::print(" {:>9.6g}", f.at(x, y));
        fmt::print("\n");
    }
}

constexpr std::array<std::string_view, 3> kListings{"filters", "kernels", "devices"};
constexpr const char* kListUsage = "cudaconv list filters, kernels or devices";

// The listing `what` names, in any case (as -f and -k take names). A
// UsageError in cudaconv's words where it names none: CLI11's would be
// "what is required" or "what: bogus not in {filters,kernels,devices}".
std::string_view listing(const std::string& what) {
    if (what.empty()) throw UsageError(fmt::format("list what? {}", kListUsage));
    const std::string wanted = ascii_lower(what);
    constexpr std::size_t kMaxTypoEdits = 2;
    std::string_view closest;
    std::size_t best = kMaxTypoEdits + 1;
    for (const std::string_view name : kListings) {
        if (wanted == name) return name;
        const std::size_t distance = edit_distance(wanted, name);
        if (distance < best) {
            best = distance;
            closest = name;
        }
    }
    std::string message = fmt::format("unknown list \"{}\"; {}", printable(what), kListUsage);
    if (!closest.empty()) message += fmt::format(" (did you mean \"{}\"?)", closest);
    throw UsageError(message);
}

// Each listing keeps to an 80-column terminal: a description too long for
// its line goes on below, under where it began (base/wrap.hpp).
void print_wrapped(const std::string& lead, const std::string& text, int indent) {
    fmt::print("{}\n", wrap_hanging(lead, text, indent));
}

// One plain line a filter; -v adds how it is made and its taps.
int list_filters() {
    const bool verbose = spdlog::should_log(spdlog::level::debug);
    // Taps are printed for small filters (7 columns of 10 fit in 80);
    // larger ones would fill the screen.
    constexpr int kMaxPrintedSide = 7;
    constexpr int kSyntaxColumns = 20;
    for (const NamedFilterInfo& info : named_filters()) {
        print_wrapped(fmt::format("{:<{}} ", info.syntax, kSyntaxColumns), info.description,
                      kSyntaxColumns + 1);
        if (!verbose) continue;
        const Filter f = parse_filter_spec(info.example);
        print_wrapped(std::string(kSyntaxColumns + 1, ' '), info.detail, kSyntaxColumns + 1);
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
    if (!verbose) print_wrapped("", "-v shows how each is made, and its taps.", 0);
    return 0;
}

// Every variant, a composite's named paths indented under it; -v adds the
// tuning parameters bench --param may set.
int list_kernels() {
    const bool verbose = spdlog::should_log(spdlog::level::debug);
    constexpr int kNameColumns = 23;
    constexpr int kSummaryColumn = kNameColumns + 7;  // after " CUDA "
    constexpr int kParamColumn = kSummaryColumn + 2;
    for (const auto& b : all_backends()) {
        const bool path = !b->parent().empty();
        const std::string name = (path ? "  " : "") + std::string(b->name());
        print_wrapped(
            fmt::format("{:<{}} {:<5} ", name, kNameColumns, b->uses_cuda() ? "CUDA" : "CPU"),
            std::string(b->summary()), kSummaryColumn);
        if (!path || !verbose) continue;
        for (const TuningParam& p : b->tuning_params()) {
            print_wrapped(fmt::format("{:<{}}--param {}: ", "", kParamColumn, p.name),
                          fmt::format("{} ({} to {})", p.meaning, p.min, p.max), kParamColumn + 2);
        }
    }
    // A convolution layer's variants are a list of their own (--weights).
    std::vector<std::string> layers;
    for (const auto& v : make_layer_variants()) {
        layers.push_back(fmt::format("{} ({})", v->name(), v->summary()));
    }
    // Indented, so that no line reads as a variant's (the completions and
    // scripts take a line's first word as one).
    fmt::print("\n");
    print_wrapped("  A convolution layer (--weights) runs on ",
                  fmt::format("{}.", fmt::join(layers, "; ")), 2);
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

// `what` is checked by run_list_command (listing), not by CLI11, so that a
// missing or unknown one is said in cudaconv's words; and an unknown option
// (`list --frob`) is reported as one (parse_errors.hpp), not hidden behind
// "what is required".
void add_list_options(CLI::App& app, ListOptions& options) {
    app.add_option("what", options.what, "filters, kernels or devices");
}

int run_list_command(const ListOptions& options) {
    const std::string_view what = listing(options.what);
    if (what == "filters") return list_filters();
    if (what == "kernels") return list_kernels();
    return list_devices();
}

}  // namespace cudaconv
