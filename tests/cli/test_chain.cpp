// Filter chains as users write them: `-f A -f B` equals A written as float32
// and B run on that file, {filter} names the chain, --json tells its steps'
// variants, and what a chain cannot mean is refused before any work.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <opencv2/imgcodecs.hpp>

#include "support/files.hpp"
#include "support/json_lines.hpp"
#include "support/run_command.hpp"
#include "support/skip_without_device.hpp"

namespace cudaconv::test {
namespace fs = std::filesystem;

namespace {

cv::Mat read(const fs::path& path) { return cv::imread(path.string(), cv::IMREAD_UNCHANGED); }

bool same_pixels(const cv::Mat& a, const cv::Mat& b) {
    return !a.empty() && a.size() == b.size() && a.type() == b.type() && cv::norm(a, b) == 0.0;
}

// The chain's output against its steps run one after another: the first
// step written as float32 (PFM keeps every bit), the second run on that
// file into `out_name`'s format.
void check_chain_equals_steps(const std::string& sample, const std::vector<std::string>& extra) {
    TempDir dir;
    copy_sample(sample, dir / "in.png");
    std::vector<std::string> chain{"in.png",  "-f", "gaussian:sigma=1.5", "-f",
                                   "sharpen", "-o", "chain.png"};
    chain.insert(chain.end(), extra.begin(), extra.end());
    const auto whole = run_cudaconv(chain, dir.path());
    INFO(whole.err);
    REQUIRE(whole.exit_code == 0);

    std::vector<std::string> first{"in.png", "-f", "gaussian:sigma=1.5", "--depth",
                                   "f32",    "-o", "step1.pfm"};
    first.insert(first.end(), extra.begin(), extra.end());
    REQUIRE(run_cudaconv(first, dir.path()).exit_code == 0);
    const std::string depth = read(dir / "in.png").depth() == CV_16U ? "u16" : "u8";
    std::vector<std::string> second{"step1.pfm", "-f", "sharpen",  "--depth",
                                    depth,       "-o", "step2.png"};
    second.insert(second.end(), extra.begin(), extra.end());
    const auto two = run_cudaconv(second, dir.path());
    INFO(two.err);
    REQUIRE(two.exit_code == 0);
    CHECK(same_pixels(read(dir / "chain.png"), read(dir / "step2.png")));
}

}  // namespace

TEST_CASE("chain: -f A -f B equals A in float32, then B", "[cli][chain]") {
    for (const char* sample : {"camera-crop.png", "chelsea-crop.png", "camera16-crop.png"}) {
        INFO(sample);
        check_chain_equals_steps(sample, {"-k", "cpu-ref"});
        check_chain_equals_steps(sample, {"--border", "replicate"});
    }
}

TEST_CASE("chain: differs from its filters' rounded steps and from one filter", "[cli][chain]") {
    TempDir dir;
    copy_sample("camera-crop.png", dir / "in.png");
    REQUIRE(run_cudaconv({"in.png", "-f", "gaussian:sigma=1.5", "-f", "sharpen", "-o", "chain.png"},
                         dir.path())
                .exit_code == 0);
    REQUIRE(
        run_cudaconv({"in.png", "-f", "gaussian:sigma=1.5", "-o", "a.png"}, dir.path()).exit_code ==
        0);
    REQUIRE(run_cudaconv({"a.png", "-f", "sharpen", "-o", "ab.png"}, dir.path()).exit_code == 0);
    CHECK_FALSE(same_pixels(read(dir / "chain.png"), read(dir / "a.png")));
    // Rounding between steps moves some samples: the chain does not round.
    CHECK_FALSE(same_pixels(read(dir / "chain.png"), read(dir / "ab.png")));
    CHECK(cv::norm(read(dir / "chain.png"), read(dir / "ab.png"), cv::NORM_INF) <= 4.0);
}

TEST_CASE("chain: {filter} names it, --json and -v tell each step's variant", "[cli][chain]") {
    TempDir dir;
    copy_sample("chelsea-crop.png", dir / "in.png");
    const auto r = run_cudaconv({"in.png", "-f", "box:3", "-f", "edge", "-k", "cpu", "-o",
                                 "{stem}-{filter}.png", "--json", "-"},
                                dir.path());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(fs::exists(dir / "in-box-3+edge.png"));
    const auto line = nlohmann::json::parse(r.out.substr(0, r.out.find('\n')));
    CHECK(line["filter"]["spec"] == "box:3+edge");
    CHECK(line["filter"]["width"] == 5);  // what an output pixel reaches: 3 + 3 - 1
    CHECK(line["variant"] == "cpu");
}

TEST_CASE("chain: what it cannot mean is refused before any work", "[cli][chain]") {
    TempDir dir;
    copy_sample("camera-crop.png", dir / "in.png");
    struct Refusal {
        std::vector<std::string> args;
        std::string says;
    };
    const std::vector<Refusal> refusals{
        {{"-f", "box:3", "-f", "edge", "--anchor", "0,0"}, "--anchor places one filter's anchor"},
        {{"-f", "none", "-f", "edge"}, "cannot be a step of a chain"},
        {{"-f", "edge", "-f", "none"}, "cannot be a step of a chain"},
        {{"-f", "edge", "-f", "nosuchfilter"}, "nosuchfilter"},
    };
    for (const Refusal& refusal : refusals) {
        std::vector<std::string> args{"in.png", "-o", "out.png"};
        args.insert(args.end(), refusal.args.begin(), refusal.args.end());
        const auto r = run_cudaconv(args, dir.path());
        INFO(r.err);
        CHECK(r.exit_code == 2);
        CHECK(r.err.find(refusal.says) != std::string::npos);
        CHECK_FALSE(fs::exists(dir / "out.png"));
    }
    // A valid border that the chain's filters together leave no output of.
    const auto r = run_cudaconv({"in.png", "-o", "out.png", "--border", "valid", "-f", "box:31",
                                 "-f", "box:31", "-f", "box:31"},
                                dir.path());
    INFO(r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("91x91 reach of the chain's filters") != std::string::npos);
}

// The first JSON line of a run's stdout.
nlohmann::json first_line(const std::string& out) {
    return nlohmann::json::parse(out.substr(0, out.find('\n')));
}

TEST_CASE("chain: steps that equal one rank-1 filter run as that filter", "[cli][chain]") {
    TempDir dir;
    copy_sample("chelsea-crop.png", dir / "in.png");
    const auto run = [&](const std::string& variant, const std::string& border,
                         const std::string& out) {
        const auto r = run_cudaconv({"in.png", "-f", "box:3", "-f", "box:5", "-k", variant,
                                     "--border", border, "-o", out, "--json", "-"},
                                    dir.path());
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        return first_line(r.out)["path"].get<std::string>();
    };
    // Boxes are symmetric: under the default border the steps equal one
    // 7x7 box, which cpu runs in one pass; cpu-ref runs the steps.
    CHECK(run("cpu", "reflect101", "cpu.png").find("(2 steps as one 7x7)") != std::string::npos);
    CHECK(run("cpu-ref", "reflect101", "ref.png") == "cpu-ref+cpu-ref");
    const auto same = run_cudaconv({"compare", "cpu.png", "ref.png", "--max-abs", "1"}, dir.path());
    INFO(same.out << same.err);
    CHECK(same.exit_code == 0);
    // Under replicate the edges' copies are not what the first step
    // computed there: the steps run one after another.
    const std::string replicate = run("cpu", "replicate", "rep.png");
    CHECK(std::count(replicate.begin(), replicate.end(), '+') == 1);
}

namespace {

// A chain's float32 result on cpu-ref, which the GPU variants are held to.
struct CpuReference {
    cv::Mat image;
    double largest = 0.0;  // its largest magnitude: the GPU's bound is 1e-4 of it

    bool holds(const cv::Mat& gpu) const {
        return !gpu.empty() && cv::norm(gpu, image, cv::NORM_INF) <= 1e-4 * largest;
    }
};

CpuReference run_on_cpu_ref(std::vector<std::string> chain, const fs::path& dir) {
    chain.insert(chain.end(), {"-k", "cpu-ref", "-o", "cpu.pfm"});
    const auto r = run_cudaconv(chain, dir);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CpuReference reference{read(dir / "cpu.pfm")};
    cv::minMaxLoc(cv::Mat(cv::abs(reference.image)).reshape(1), nullptr, &reference.largest);
    return reference;
}

// The chain on `variant`, written to <variant>.pfm, its JSON line on stdout.
CommandResult run_on_variant(std::vector<std::string> chain, const std::string& variant,
                             const fs::path& dir) {
    chain.insert(chain.end(), {"-k", variant, "-o", variant + ".pfm", "--json", "-"});
    return run_cudaconv(chain, dir);
}

}  // namespace

TEST_CASE("chain: on the GPU, every step on the device, equal to cpu-ref", "[cli][chain][gpu]") {
    if (skip_without_device()) return;
    TempDir dir;
    copy_sample("chelsea-crop.png", dir / "in.png");
    const std::vector<std::string> chain{"in.png", "-f",    "gaussian:sigma=2", "-f", "edge",
                                         "-f",     "box:5", "--depth",          "f32"};
    const CpuReference cpu = run_on_cpu_ref(chain, dir.path());
    for (const std::string variant : {"fast", "fast-separable", "smem", "fft", "auto"}) {
        INFO(variant);
        const auto r = run_on_variant(chain, variant, dir.path());
        INFO(r.err);
        if (variant == "fast-separable") {  // edge is not rank 1
            CHECK(r.exit_code == 2);
            CHECK(r.err.find("cannot run step 2 of the chain (edge)") != std::string::npos);
            continue;
        }
        REQUIRE(r.exit_code == 0);
        CHECK(cpu.holds(read(dir / (variant + ".pfm"))));
        const auto line = first_line(r.out);
        // One upload of the input; each step's path, the images between
        // them never downloaded. (auto runs so small an image on the CPU.)
        if (line["variant"] == "cpu") continue;
        CHECK(line["timings_ms"]["upload"].get<double>() > 0.0);
        const std::string path = line["path"].get<std::string>();
        CHECK(std::count(path.begin(), path.end(), '+') == 2);
    }
}

TEST_CASE("chain: on the GPU, Gaussians as one filter, equal to cpu-ref", "[cli][chain][gpu]") {
    if (skip_without_device()) return;
    TempDir dir;
    copy_sample("chelsea-crop.png", dir / "in.png");
    const std::vector<std::string> chain{
        "in.png", "-f", "gaussian:sigma=2", "-f", "gaussian:sigma=3", "--depth", "f32"};
    const CpuReference cpu = run_on_cpu_ref(chain, dir.path());
    // fast runs the one filter on fast.separable, fast-separable's kernels.
    for (const std::string variant :
         {"fast", "fast-separable", "fast-separable.strips", "separable", "fft"}) {
        INFO(variant);
        const auto r = run_on_variant(chain, variant, dir.path());
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        const std::string path = first_line(r.out)["path"].get<std::string>();
        CHECK(path.find("(2 steps as one 31x31)") != std::string::npos);
        if (variant == "fast") CHECK(path.rfind("fast.separable ", 0) == 0);
        CHECK(cpu.holds(read(dir / (variant + ".pfm"))));
    }
}

TEST_CASE("chain: on the GPU, under replicate, one filter inside and the steps near the edges",
          "[cli][chain][gpu]") {
    if (skip_without_device()) return;
    TempDir dir;
    copy_sample("chelsea-crop.png", dir / "in.png");
    const std::vector<std::string> chain{
        "in.png",   "-f",        "gaussian:sigma=2", "-f", "gaussian:sigma=3",
        "--border", "replicate", "--depth",          "f32"};
    const CpuReference cpu = run_on_cpu_ref(chain, dir.path());
    for (const std::string variant : {"fast", "fast-separable", "separable", "fft"}) {
        INFO(variant);
        const auto r = run_on_variant(chain, variant, dir.path());
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        const std::string path = first_line(r.out)["path"].get<std::string>();
        CHECK(path.find("(2 steps as one 31x31 inside, chain-edges near the edges)") !=
              std::string::npos);
        CHECK(cpu.holds(read(dir / (variant + ".pfm"))));
    }
}

TEST_CASE("chain: auto chooses the variant for the one filter the steps equal",
          "[cli][chain][gpu]") {
    if (skip_without_device()) return;
    // Gray float32, where fast-separable goes ahead of fast from 9x9: each
    // 7x7 step alone would go to fast's own paths; their one 19x19 goes to
    // fast-separable, which runs it as one. Two images, so that auto does
    // not run a lone small image on the CPU.
    TempDir dir;
    fs::create_directory(dir / "in");
    copy_sample("camera-crop-f32.pfm", dir / "in" / "a.pfm");
    copy_sample("camera-crop-f32.pfm", dir / "in" / "b.pfm");
    const auto r = run_cudaconv({"in", "-f", "gaussian:sigma=1", "-f", "gaussian:sigma=1", "-f",
                                 "gaussian:sigma=1", "-k", "auto", "-o", "out/", "--json", "-"},
                                dir.path());
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    const auto lines = json_by_input(r.out);
    REQUIRE(lines.size() == 2);
    for (const auto& [input, line] : lines) {
        INFO(input);
        CHECK(line["variant"] == "fast-separable");
        CHECK(line["path"].get<std::string>().find("(3 steps as one 19x19)") != std::string::npos);
    }
}

}  // namespace cudaconv::test
