// Real sample images through the binary, against the golden outputs of
// images/golden/MANIFEST: cpu-ref always, every CUDA variant on a GPU.
#include <catch2/catch.hpp>

#include <fstream>
#include <iostream>
#include <sstream>

#include <opencv2/imgcodecs.hpp>

#include "core/registry.hpp"
#include "kernels/device_info.hpp"
#include "support/compare.hpp"
#include "support/run_command.hpp"

namespace cudaconv::test {
namespace fs = std::filesystem;

namespace {

struct Golden {
    std::string golden;
    std::string input;
    std::vector<std::string> args;
};

std::vector<Golden> read_manifest() {
    std::ifstream in(source_dir() / "images" / "golden" / "MANIFEST");
    std::vector<Golden> list;
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream fields(line);
        Golden g;
        std::string args;
        std::getline(fields, g.golden, '\t');
        std::getline(fields, g.input, '\t');
        std::getline(fields, args);
        std::istringstream words(args);
        for (std::string w; words >> w;) g.args.push_back(w);
        list.push_back(g);
    }
    return list;
}

// Runs one variant on one golden's input and compares with the golden.
void check_golden(const Golden& g, const std::string& variant, const Tolerance& tolerance) {
    TempDir dir;
    const std::string out = (dir / ("out" + fs::path(g.golden).extension().string())).string();
    std::vector<std::string> args{(source_dir() / g.input).string()};
    args.insert(args.end(), g.args.begin(), g.args.end());
    args.insert(args.end(), {"-k", variant, "-q", "-o", out});
    const auto r = run_cudaconv(args, dir.path());
    INFO(variant << " on " << g.golden << ": " << r.err);
    if (r.exit_code == 2 && r.err.find("cannot run this job") != std::string::npos) {
        std::cout << variant << " on " << g.golden << ": not supported: " << r.err;
        return;  // a refusal with a reason is allowed (SPEC.md, Variants)
    }
    REQUIRE(r.exit_code == 0);
    const cv::Mat expected = cv::imread((source_dir() / g.golden).string(), cv::IMREAD_UNCHANGED);
    const cv::Mat actual = cv::imread(out, cv::IMREAD_UNCHANGED);
    REQUIRE_FALSE(expected.empty());
    const Comparison cmp = compare_images(expected, actual, tolerance);
    INFO(cmp.describe());
    CHECK(cmp.ok);
}

}  // namespace

TEST_CASE("the manifest lists at least three goldens, all present", "[golden]") {
    const auto goldens = read_manifest();
    CHECK(goldens.size() >= 3);
    for (const Golden& g : goldens) {
        CAPTURE(g.golden);
        CHECK(fs::exists(source_dir() / g.golden));
        CHECK(fs::exists(source_dir() / g.input));
    }
}

TEST_CASE("cpu-ref reproduces every golden", "[golden]") {
    for (const Golden& g : read_manifest()) check_golden(g, "cpu-ref", {});
}

TEST_CASE("every CUDA variant reproduces every golden", "[golden][gpu]") {
    const DeviceProbe& probe = probe_devices();
    if (probe.devices.empty()) {
        std::cout << "SKIPPED: no CUDA device (" << probe.problem << ")\n";
        return;
    }
    for (const auto& backend : all_backends()) {
        if (!backend->uses_cuda()) continue;
        // fft's float32 transforms are held to a looser bound (kernels/fft.cu).
        const Tolerance tolerance =
            backend->name() == "fft" ? Tolerance{1.0, 1e-4} : Tolerance{};
        for (const Golden& g : read_manifest()) {
            check_golden(g, std::string(backend->name()), tolerance);
        }
    }
}

}  // namespace cudaconv::test
