// --decoder: where JPEG inputs are decoded. Refusals before any work
// anywhere; on a GPU machine, a batch whose JPEGs the GPU decodes, checked
// against the CPU decoder's pixels and against filtering those pixels
// after a lossless round trip.
#include <catch2/catch.hpp>

#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include "kernels/runtime/device_info.hpp"
#include "support/exif_jpeg.hpp"
#include "support/files.hpp"
#include "support/json_lines.hpp"
#include "support/run_command.hpp"
#include "support/skip_without_device.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;

namespace cudaconv::test {
namespace {

std::string jpeg_of(const std::string& sample_name, std::vector<int> params) {
    const cv::Mat image = cv::imread(sample(sample_name), cv::IMREAD_UNCHANGED);
    std::vector<unsigned char> bytes;
    REQUIRE(cv::imencode(".jpg", image, bytes, params));
    return std::string(bytes.begin(), bytes.end());
}

cv::Mat read_png(const fs::path& p) {
    cv::Mat m = cv::imread(p.string(), cv::IMREAD_UNCHANGED);
    REQUIRE(!m.empty());
    return m;
}

}  // namespace

TEST_CASE("decoder: --decoder gpu is refused before any work where the GPU cannot decode",
          "[cli][decoder]") {
    TempDir dir;
    copy_sample("rocket.jpg", dir / "in" / "a.jpg");
    copy_sample("rocket.jpg", dir / "in" / "b.jpg");
    struct Case {
        std::vector<std::string> args;
        const char* says;
    };
    std::vector<Case> cases{
        {{"-f", "none"}, "--decoder gpu: -f none runs nothing on the GPU"},
        {{"-f", "edge", "-k", "cpu"}, "--decoder gpu: -k cpu filters on the CPU"},
    };
    if (probe_devices().devices.empty()) {
        cases.push_back({{"-f", "edge"}, "--decoder gpu: the GPU cannot decode here: "});
    }
    for (const Case& c : cases) {
        std::vector<std::string> args{"in", "--decoder", "gpu", "-o", "out/"};
        args.insert(args.end(), c.args.begin(), c.args.end());
        const auto r = run_cudaconv(args, dir.path());
        INFO(r.err);
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Contains(c.says));
        CHECK_FALSE(fs::exists(dir / "out"));
    }
    const auto bad =
        run_cudaconv({"in", "-f", "edge", "--decoder", "hardware", "-o", "out/"}, dir.path());
    CHECK(bad.exit_code == 2);
    CHECK_FALSE(fs::exists(dir / "out"));
}

// Without a GPU every image says the CPU decoded it, whatever --decoder.
TEST_CASE("decoder: --json and --timings say which decoder each image used", "[cli][decoder]") {
    TempDir dir;
    copy_sample("rocket.jpg", dir / "in" / "a.jpg");
    copy_sample("camera.png", dir / "in" / "b.png");
    const auto r = run_cudaconv(
        {"in", "-f", "edge", "-k", "cpu", "--json", "-", "-q", "-o", "out/"}, dir.path());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto lines = json_by_input(r.out);
    REQUIRE(lines.size() == 2);
    for (const auto& [input, line] : lines) CHECK(line["decoder"] == "cpu");
    const auto one = run_cudaconv(
        {"in/a.jpg", "-f", "edge", "-k", "cpu", "--timings", "-o", "a.png"}, dir.path());
    REQUIRE(one.exit_code == 0);
    CHECK_THAT(one.out + one.err, Contains(" ms  cpu"));
}

// The GPU decodes the batch's baseline JPEGs (colour 4:2:0 and gray) and
// the CPU the rest (a progressive JPEG, a PNG), which --decoder gpu says
// once; a truncated JPEG fails alone. nvJPEG's pixels are within the bound
// measured against libjpeg-turbo (docs/SPEC.md); and a filter of them
// equals the same filter of those pixels written out losslessly and read
// back, so the variant read them from the device as from the host.
TEST_CASE("a batch's JPEGs decoded on the GPU, within the bound of the CPU decoder's",
          "[cli][decoder][gpu]") {
    if (skip_without_device()) return;
    TempDir dir;
    const fs::path in = dir / "in";
    write_file(in / "colour.jpg", jpeg_of("chelsea.png", {cv::IMWRITE_JPEG_QUALITY, 90}));
    write_file(in / "gray.jpg", jpeg_of("camera.png", {cv::IMWRITE_JPEG_QUALITY, 90}));
    copy_sample("rocket.jpg", in / "rocket.jpg");
    write_file(in / "progressive.jpg", jpeg_of("chelsea.png", {cv::IMWRITE_JPEG_PROGRESSIVE, 1}));
    copy_sample("camera.png", in / "png.png");
    // Tagged RightTop: turned upright, so the CPU decodes it.
    const auto turned = jpeg_with_segment(cv::imread(sample("chelsea.png")), exif_segment(6));
    write_file(in / "turned.jpg", std::string(turned.begin(), turned.end()));
    const std::string whole = jpeg_of("chelsea.png", {cv::IMWRITE_JPEG_QUALITY, 90});
    write_file(in / "truncated.jpg", whole.substr(0, whole.size() / 2));

    const auto run = [&](const std::string& decoder, const std::string& filter,
                         const std::string& out) {
        const auto r = run_cudaconv({"in", "-f", filter, "-k", "naive", "--decoder", decoder,
                                     "--json", "-", "-o", out + "/{stem}.png"},
                                    dir.path());
        INFO(r.err);
        CHECK(r.exit_code == 1);  // the truncated one
        CHECK_THAT(r.err, Contains("truncated.jpg: truncated JPEG"));
        return r;
    };
    const auto gpu = run("gpu", "identity", "gpu");
    run("cpu", "identity", "cpu");
    const auto lines = json_by_input(gpu.out);
    REQUIRE(lines.size() == 7);
    CHECK(lines.at("in/truncated.jpg")["status"] == "failed");
    for (const char* name : {"colour", "gray", "rocket"}) {
        INFO(name);
        const std::string decoder = lines.at("in/" + std::string(name) + ".jpg")["decoder"];
        CHECK((decoder == "nvjpeg-hardware" || decoder == "nvjpeg-hybrid"));
        const cv::Mat by_gpu = read_png(dir / "gpu" / (std::string(name) + ".png"));
        const cv::Mat by_cpu = read_png(dir / "cpu" / (std::string(name) + ".png"));
        REQUIRE(by_gpu.type() == by_cpu.type());
        REQUIRE(by_gpu.size() == by_cpu.size());
        cv::Mat diff;
        cv::absdiff(by_gpu, by_cpu, diff);
        const double max_abs = cv::norm(diff, cv::NORM_INF);
        const double mean_abs =
            cv::norm(diff, cv::NORM_L1) / static_cast<double>(diff.total() * diff.channels());
        std::cout << "--decoder gpu vs cpu, " << name << ": max-abs " << max_abs << ", mean-abs "
                  << mean_abs << "\n";
        CHECK(max_abs <= 20);
        CHECK(mean_abs <= 1.0);
    }
    CHECK(lines.at("in/progressive.jpg")["decoder"] == "cpu");
    CHECK(lines.at("in/png.png")["decoder"] == "cpu");
    CHECK(lines.at("in/turned.jpg")["decoder"] == "cpu");
    CHECK(lines.at("in/turned.jpg")["image"]["width"] == 300);
    CHECK(read_bytes(dir / "gpu" / "turned.png") == read_bytes(dir / "cpu" / "turned.png"));
    CHECK_THAT(gpu.err, Contains(": decoded by the CPU ("));
    CHECK(gpu.err.find("decoded by the CPU") == gpu.err.rfind("decoded by the CPU"));  // once

    // edge of the JPEGs decoded on the GPU == edge of their lossless copies.
    run("gpu", "edge", "edge-gpu");
    for (const char* name : {"colour", "gray", "rocket"}) {
        INFO(name);
        const auto r =
            run_cudaconv({(dir / "gpu" / (std::string(name) + ".png")).string(), "-f", "edge", "-k",
                          "naive", "-q", "-o", "edge-png.png", "--overwrite"},
                         dir.path());
        REQUIRE(r.exit_code == 0);
        const cv::Mat direct = read_png(dir / "edge-gpu" / (std::string(name) + ".png"));
        const cv::Mat via_png = read_png(dir / "edge-png.png");
        REQUIRE(direct.type() == via_png.type());
        CHECK(cv::norm(direct, via_png, cv::NORM_INF) == 0);
    }
}

}  // namespace cudaconv::test
