// The golden suite of images/golden/MANIFEST: each golden checked by an
// independent implementation (cv::filter2D), the list checked for coverage,
// then every variant's output held to it through `cudaconv compare`, as a
// user's CI would: the CPU variants always, the CUDA ones on a GPU.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <opencv2/imgcodecs.hpp>

#include "cli/conv_params.hpp"
#include "cli/filter_options.hpp"
#include "variants/registry.hpp"
#include "filters/spec.hpp"
#include "kernels/runtime/device_info.hpp"
#include "support/compare.hpp"
#include "support/opencv_reference.hpp"
#include "support/run_command.hpp"

namespace cudaconv::test {
namespace fs = std::filesystem;

namespace {

std::vector<std::string> words(const std::string& text) {
    std::istringstream in(text);
    std::vector<std::string> list;
    for (std::string w; in >> w;) list.push_back(w);
    return list;
}

struct Golden {
    std::string name;                    // in images/golden/
    std::string input;                   // in images/
    std::vector<std::string> tolerance;  // `cudaconv compare` limits
    std::vector<std::string> args;       // the job, filter files relative to the root

    fs::path golden_path() const { return source_dir() / "images" / "golden" / name; }
    fs::path input_path() const { return source_dir() / "images" / input; }
    bool float_output() const { return fs::path(name).extension() == ".pfm"; }
};

std::vector<Golden> read_manifest() {
    std::ifstream in(source_dir() / "images" / "golden" / "MANIFEST");
    REQUIRE(in);
    std::vector<Golden> list;
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream fields(line);
        Golden g;
        std::string tolerance, args;
        std::getline(fields, g.name, '\t');
        std::getline(fields, g.input, '\t');
        std::getline(fields, tolerance, '\t');
        std::getline(fields, args);
        g.tolerance = words(tolerance);
        g.args = words(args);
        INFO(line);
        REQUIRE(!g.name.empty());
        REQUIRE(!g.args.empty());
        list.push_back(g);
    }
    return list;
}

// The value of an option in a golden's arguments, or "" when absent.
std::string option_value(const Golden& g, const std::string& option) {
    const auto it = std::find(g.args.begin(), g.args.end(), option);
    return (it == g.args.end() || it + 1 == g.args.end()) ? "" : *(it + 1);
}

// The fft variant's float32 transforms meet its own documented bound, not
// docs/SPEC.md's 1e-5 (kernels/fft/fft.cu, its Backend::tolerance).
std::vector<std::string> tolerance_for(const std::string& variant, const Golden& g) {
    if (variant != "fft") return g.tolerance;
    return g.float_output() ? std::vector<std::string>{"--max-rel", "1e-4"}
                            : std::vector<std::string>{"--max-abs", "1"};
}

// Runs one variant on one golden's input, from the repository root (the
// manifest's filter files are relative to it), and compares with
// `cudaconv compare` under the manifest's tolerance.
void check_golden(const Golden& g, const std::string& variant) {
    TempDir dir;
    const std::string out = (dir / ("out" + fs::path(g.name).extension().string())).string();
    std::vector<std::string> args{g.input_path().string()};
    args.insert(args.end(), g.args.begin(), g.args.end());
    args.insert(args.end(), {"-k", variant, "-q", "-o", out});
    const auto r = run_cudaconv(args, source_dir());
    INFO(variant << " on " << g.name << ": " << r.err);
    if (r.exit_code == 2 && r.err.find("cannot run this job") != std::string::npos) {
        std::cout << variant << " on " << g.name << ": not supported: " << r.err;
        return;  // a refusal with a reason is allowed (docs/SPEC.md, Variants)
    }
    REQUIRE(r.exit_code == 0);
    std::vector<std::string> compare{"compare", out, g.golden_path().string()};
    const auto limits = tolerance_for(variant, g);
    compare.insert(compare.end(), limits.begin(), limits.end());
    const auto c = run_cudaconv(compare, source_dir());
    INFO(c.out << c.err);
    CHECK(c.exit_code == 0);
}

void check_every_golden(const Backend& variant) {
    for (const Golden& g : read_manifest()) {
        DYNAMIC_SECTION(variant.name() << " on " << g.name) {
            check_golden(g, std::string(variant.name()));
        }
    }
}

}  // namespace

TEST_CASE("the manifest's goldens and inputs all exist", "[golden]") {
    const auto goldens = read_manifest();
    CHECK(goldens.size() >= 20);
    for (const Golden& g : goldens) {
        CAPTURE(g.name);
        CHECK(fs::exists(g.golden_path()));
        CHECK(fs::exists(g.input_path()));
        CHECK(g.tolerance.size() == 2);
    }
}

TEST_CASE("the manifest covers every named filter, border, depth and channel layout", "[golden]") {
    const auto goldens = read_manifest();
    std::set<std::string> filters, borders, depths, file_kinds;
    std::set<int> channel_counts, input_depths;
    bool alpha_kept = false, alpha_filtered = false;
    for (const Golden& g : goldens) {
        const std::string spec = option_value(g, "-f");
        filters.insert(spec.substr(0, spec.find(':')));
        // box:N and box:WxH are different syntaxes of one name: keep both.
        if (spec.rfind("box:", 0) == 0) {
            filters.insert(spec.find('x', 4) != std::string::npos ? "box:WxH" : "box:N");
        }
        if (spec.rfind("gaussian:", 0) == 0) {
            const auto colons = std::count(spec.begin(), spec.end(), ':');
            filters.insert(spec.find("sigma=") != std::string::npos ? "gaussian:sigma=S"
                           : colons == 2                            ? "gaussian:N:SIGMA"
                                                                    : "gaussian:N");
        }
        if (spec.find(".mat") != std::string::npos) file_kinds.insert("mat");
        else if (spec.find("filters/") == 0) file_kinds.insert("plain");
        else if (spec.find('x') != std::string::npos &&
                 std::isdigit(static_cast<unsigned char>(spec[0])))
            file_kinds.insert("inline");
        const std::string border = option_value(g, "--border");
        borders.insert(border.empty() ? "reflect101" : border);

        const cv::Mat golden = cv::imread(g.golden_path().string(), cv::IMREAD_UNCHANGED);
        const cv::Mat input = cv::imread(g.input_path().string(), cv::IMREAD_UNCHANGED);
        REQUIRE_FALSE(golden.empty());
        depths.insert(std::string(depth_name(depth_of(golden))));
        input_depths.insert(input.depth());
        channel_counts.insert(golden.channels());
        if (input.channels() == 4) {
            (option_value(g, "--alpha") == "filter" ? alpha_filtered : alpha_kept) = true;
        }
    }
    for (const NamedFilterInfo& info : named_filters()) {
        std::string syntax(info.syntax);
        if (syntax.rfind("gaussian:", 0) != 0 && syntax.rfind("box:", 0) != 0) {
            syntax = syntax.substr(0, syntax.find(':'));
        }
        CAPTURE(syntax);
        CHECK(filters.count(syntax) == 1);
    }
    for (const char* border : {"reflect101", "reflect", "replicate", "constant", "wrap", "valid"}) {
        CAPTURE(border);
        CHECK(borders.count(border) == 1);
    }
    CHECK(depths == std::set<std::string>{"u8", "u16", "f32"});
    CHECK(input_depths == std::set<int>{CV_8U, CV_16U, CV_32F});
    CHECK(channel_counts == std::set<int>{1, 3, 4});
    CHECK(alpha_kept);
    CHECK(alpha_filtered);
    CHECK(file_kinds == std::set<std::string>{"mat", "plain", "inline"});
}

// Each golden came from cpu-ref; this holds it to cv::filter2D (through
// tests/support/opencv_reference, which shares no arithmetic with cpu-ref),
// with the job read from the manifest by the CLI's own option parser.
TEST_CASE("every golden also matches cv::filter2D", "[golden]") {
    for (const Golden& g : read_manifest()) {
        CAPTURE(g.name);
        FilterOptions options;
        CLI::App app;
        add_filter_options(app, options);
        std::vector<std::string> args{g.input_path().string()};
        for (const std::string& a : g.args) {
            const bool repo_file = fs::exists(source_dir() / a) && a.find('/') != std::string::npos;
            args.push_back(repo_file ? (source_dir() / a).string() : a);
        }
        args.insert(args.end(), {"-o", "unused.png"});
        std::reverse(args.begin(), args.end());  // CLI11 parses a reversed vector
        REQUIRE_NOTHROW(app.parse(args));

        REQUIRE(options.filter_specs.size() == 1);  // chains have goldens of their own
        const ConvParams params =
            build_conv_params(options, parse_filter_spec(options.filter_specs.front()));
        const cv::Mat input = cv::imread(g.input_path().string(), cv::IMREAD_UNCHANGED);
        const cv::Mat golden = cv::imread(g.golden_path().string(), cv::IMREAD_UNCHANGED);
        REQUIRE_FALSE(input.empty());
        REQUIRE_FALSE(golden.empty());
        const Depth out_depth = options.depth == "same" ? depth_of(input)
                                                        : *parse_depth(options.depth);
        REQUIRE(depth_of(golden) == out_depth);
        const Comparison cmp = compare_images(reference_exact(input, params), golden);
        INFO(cmp.describe());
        CHECK(cmp.ok);
    }
}

namespace {

// The CPU variants in groups of two, a test case (and a CTest test) each,
// so that CTest runs them side by side: all six take over 4 minutes under
// AddressSanitizer, one process a golden.
const std::vector<std::vector<std::string>> kCpuGoldenGroups{
    {"cpu-ref", "cpu"}, {"cpu.direct", "cpu.int16"}, {"cpu.two-pass", "cpu.fft"}};

void check_golden_group(std::size_t group) {
    for (const std::string& name : kCpuGoldenGroups.at(group)) {
        const Backend* variant = find_backend(name);
        INFO(name);
        REQUIRE(variant != nullptr);
        check_every_golden(*variant);
    }
}

}  // namespace

TEST_CASE("the golden groups name every CPU variant once", "[golden]") {
    std::multiset<std::string> grouped, cpu;
    for (const auto& group : kCpuGoldenGroups) grouped.insert(group.begin(), group.end());
    for (const auto& backend : all_backends()) {
        if (!backend->uses_cuda()) cpu.insert(std::string(backend->name()));
    }
    CHECK(grouped == cpu);
}

TEST_CASE("cpu-ref and cpu reproduce every golden", "[golden]") { check_golden_group(0); }

TEST_CASE("cpu.direct and cpu.int16 reproduce every golden", "[golden]") { check_golden_group(1); }

TEST_CASE("cpu.two-pass and cpu.fft reproduce every golden", "[golden]") { check_golden_group(2); }

TEST_CASE("every CUDA variant reproduces every golden", "[golden][gpu]") {
    const DeviceProbe& probe = probe_devices();
    if (probe.devices.empty()) {
        std::cout << "SKIPPED: no CUDA device (" << probe.problem << ")\n";
        return;
    }
    for (const auto& backend : all_backends()) {
        if (backend->uses_cuda()) check_every_golden(*backend);
    }
}

}  // namespace cudaconv::test
