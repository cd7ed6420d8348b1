// `--weights`: a convolution layer from the command line. An image input
// is the same layer input as the .npy of its RGB samples; the outputs,
// {filter}, --json and the exit codes; and every bad input of the issue
// (C_in, the bias's length, a non-float32, Fortran-ordered, truncated or
// absurd .npy, an odd size under the pool) one line, exit 2, before any
// work: no output written.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include "io/npy.hpp"
#include "support/files.hpp"
#include "support/json_lines.hpp"
#include "support/run_command.hpp"
#include "support/skip_without_device.hpp"

namespace cudaconv::test {
namespace fs = std::filesystem;

namespace {

void write_npy(const fs::path& path, const std::vector<std::int64_t>& shape,
               const std::vector<float>& data) {
    const std::vector<std::uint8_t> file = encode_npy(shape, data.data());
    write_file(path, std::string(file.begin(), file.end()));
}

NpyArray read_npy(const fs::path& path) {
    const std::string bytes = read_bytes(path);
    return parse_npy(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(),
                     {1, 4, "any"});
}

std::vector<float> ramp(std::size_t n, float step) {
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = std::fmod(static_cast<float>(i) * step, 3.0f) - 1.0f;
    return v;
}

// A 3x3 RGB -> 4 layer with its bias, in `dir`.
void write_layer(const fs::path& dir) {
    write_npy(dir / "w.npy", {3, 3, 3, 4}, ramp(3 * 3 * 3 * 4, 0.37f));
    write_npy(dir / "b.npy", {4}, {0.5f, -0.25f, 0.0f, 1.0f});
}

}  // namespace

TEST_CASE("layer: an image is the .npy of its RGB samples", "[cli][layer]") {
    TempDir dir;
    copy_sample("chelsea-crop.png", dir / "in.png");
    write_layer(dir.path());
    const cv::Mat bgr = cv::imread((dir / "in.png").string(), cv::IMREAD_UNCHANGED);
    std::vector<float> rgb;
    for (int y = 0; y < bgr.rows; ++y) {
        for (int x = 0; x < bgr.cols; ++x) {
            const cv::Vec3b p = bgr.at<cv::Vec3b>(y, x);
            rgb.insert(rgb.end(), {float(p[2]), float(p[1]), float(p[0])});
        }
    }
    write_npy(dir / "in.npy", {bgr.rows, bgr.cols, 3}, rgb);
    for (const char* kernel : {"cpu-ref", "cpu"}) {
        INFO(kernel);
        for (const char* input : {"in.png", "in.npy"}) {
            const auto r = run_cudaconv({input, "--weights", "w.npy", "--bias", "b.npy",
                                         "--activation", "relu", "-k", kernel, "-o",
                                         std::string(input) + "." + kernel + ".npy"},
                                        dir.path());
            INFO(r.err);
            REQUIRE(r.exit_code == 0);
            CHECK(r.err.empty());  // silent on success
        }
        CHECK(read_bytes(dir / (std::string("in.png.") + kernel + ".npy")) ==
              read_bytes(dir / (std::string("in.npy.") + kernel + ".npy")));
    }
    const NpyArray out = read_npy(dir / "in.npy.cpu.npy");
    CHECK(out.shape == std::vector<std::int64_t>{bgr.rows, bgr.cols, 4});
    for (float v : out.data) CHECK(v >= 0.0f);  // relu
}

TEST_CASE("layer: the pool halves the size, {filter}, --json", "[cli][layer]") {
    TempDir dir;
    write_layer(dir.path());
    write_npy(dir / "a.npy", {6, 8, 3}, ramp(6 * 8 * 3, 0.11f));
    write_npy(dir / "b.npy", {4, 4, 3}, ramp(4 * 4 * 3, 0.07f));
    const auto r = run_cudaconv({"a.npy", "b.npy", "--weights", "w.npy", "--pool", "max2", "-k",
                                 "cpu", "-o", "out/{stem}-{filter}.npy", "--json", "-"},
                                dir.path());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(read_npy(dir / "out/a-w.npy").shape == std::vector<std::int64_t>{3, 4, 4});
    CHECK(read_npy(dir / "out/b-w.npy").shape == std::vector<std::int64_t>{2, 2, 4});
    const auto lines = json_by_input(r.out);
    REQUIRE(lines.size() == 2);
    const nlohmann::json& a = lines.at("a.npy");
    CHECK(a["status"] == "done");
    CHECK(a["variant"] == "cpu");
    CHECK(a["filter"]["spec"] == "3x3x3->4, none, max2, border zero");
    CHECK(a["image"]["channels"] == 3);
    CHECK(a["output_image"]["channels"] == 4);
    CHECK(a["output_image"]["width"] == 4);
}

TEST_CASE("layer: {channel} in -o writes one image a channel", "[cli][layer]") {
    TempDir dir;
    write_layer(dir.path());
    write_npy(dir / "x.npy", {6, 8, 3}, ramp(6 * 8 * 3, 0.11f));
    auto r = run_cudaconv({"x.npy", "--weights", "w.npy", "-o", "all.npy"}, dir.path());
    REQUIRE(r.exit_code == 0);
    r = run_cudaconv({"x.npy", "--weights", "w.npy", "-o", "c/{stem}-{channel}.pfm"}, dir.path());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    r = run_cudaconv(
        {"x.npy", "--weights", "w.npy", "-o", "c/{stem}-{channel}.png", "--depth", "u16"},
        dir.path());
    REQUIRE(r.exit_code == 0);
    const NpyArray all = read_npy(dir / "all.npy");
    for (int c = 0; c < 4; ++c) {
        INFO("channel " << c);
        const std::string stem = (dir / ("c/x-" + std::to_string(c))).string();
        const cv::Mat f = cv::imread(stem + ".pfm", cv::IMREAD_UNCHANGED);
        const cv::Mat u = cv::imread(stem + ".png", cv::IMREAD_UNCHANGED);
        REQUIRE(f.type() == CV_32FC1);
        REQUIRE(u.type() == CV_16UC1);
        REQUIRE((f.rows == 6 && f.cols == 8));
        for (int y = 0; y < 6; ++y) {
            for (int x = 0; x < 8; ++x) {
                const float v = all.data[(static_cast<std::size_t>(y) * 8 + x) * 4 + c];
                CHECK(f.at<float>(y, x) == v);
                CHECK(u.at<std::uint16_t>(y, x) == cv::saturate_cast<std::uint16_t>(v));
            }
        }
    }
    // {channel} alone is a template too: its folders are made.
    r = run_cudaconv({"x.npy", "--weights", "w.npy", "-o", "e/f/{channel}.pfm"}, dir.path());
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(fs::exists(dir / "e/f/3.pfm"));
    // Only a layer has channels to name.
    r = run_cudaconv({"x.npy", "-f", "edge", "-o", "{channel}.pfm"}, dir.path());
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("{channel} names a layer's (--weights) output channels"));
    // A float32 channel PNG cannot hold, refused before any work.
    r = run_cudaconv({"x.npy", "--weights", "w.npy", "-o", "d/{channel}.png"}, dir.path());
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("PNG holds 8- or 16-bit samples"));
    CHECK_FALSE(fs::exists(dir / "d"));
}

TEST_CASE("layer: bad inputs are one line and exit 2, before any work", "[cli][layer]") {
    TempDir dir;
    write_layer(dir.path());
    write_npy(dir / "x.npy", {6, 8, 3}, ramp(6 * 8 * 3, 0.11f));
    write_npy(dir / "gray.npy", {6, 8}, ramp(6 * 8, 0.11f));
    write_npy(dir / "odd.npy", {7, 8, 3}, ramp(7 * 8 * 3, 0.11f));
    write_npy(dir / "w3d.npy", {3, 3, 3}, ramp(27, 0.1f));
    write_npy(dir / "b5.npy", {5}, ramp(5, 0.1f));
    copy_sample("camera-crop.png", dir / "gray.png");
    std::string w = read_bytes(dir / "w.npy");
    std::string f8 = w;
    f8.replace(f8.find("<f4"), 3, "<f8");
    write_file(dir / "f8.npy", f8);
    std::string fortran = w;
    fortran.replace(fortran.find("False"), 5, "True ");
    write_file(dir / "fortran.npy", fortran);
    write_file(dir / "truncated.npy", w.substr(0, w.size() - 7));
    std::string absurd = w;
    absurd.replace(absurd.find("(3, 3, 3, 4)"), 12, "(9999999999,)");
    write_file(dir / "absurd.npy", absurd);
    struct Case {
        std::vector<std::string> args;
        std::string message;
    };
    const std::vector<Case> cases = {
        {{"gray.npy", "--weights", "w.npy"}, "gray.npy: 1 channel where the weights take C_in = 3"},
        {{"gray.png", "--weights", "w.npy"}, "gray.png: 1 channel where the weights take C_in = 3"},
        {{"x.npy", "--weights", "w.npy", "--bias", "b5.npy"},
         "b5.npy: 5 values where the weights have C_out = 4"},
        {{"x.npy", "--weights", "w3d.npy"},
         "w3d.npy: 3 dimensions: weights are (k_h, k_w, C_in, C_out), Keras's HWIO"},
        {{"x.npy", "--weights", "f8.npy"}, "f8.npy: dtype '<f8': only float32 ('<f4') is read"},
        {{"x.npy", "--weights", "fortran.npy"},
         "fortran.npy: Fortran (column-major) order: only C order is read"},
        {{"x.npy", "--weights", "truncated.npy"}, "truncated.npy: 425 bytes of data where"},
        {{"x.npy", "--weights", "absurd.npy"}, "absurd.npy: a shape size past 2^31"},
        {{"x.npy", "--weights", "missing.npy"}, "missing.npy: cannot open the weights file"},
        {{"odd.npy", "--weights", "w.npy", "--pool", "max2"},
         "odd.npy: --pool max2 on a 8x7 convolution output: an odd size would leave its last row "
         "out of every 2x2 block"},
        {{"x.npy", "--weights", "w.npy", "-f", "edge"}, "-f appl"},
        {{"x.npy", "--weights", "w.npy", "--scale", "2"}, "--scale appl"},
        {{"x.npy", "-f", "edge", "--bias", "b.npy"}, "--bias belongs to a convolution layer"},
        {{"x.npy", "--weights", "w.npy", "-k", "smem"},
         "-k smem: an image filter's variant (a layer runs on cpu-ref, cpu, cudnn, mma, or auto)"},
        {{"x.npy", "--weights", "w.npy", "--border-value", "nan"},
         "--border-value must be a finite float32 number"},
        {{"x.npy", "--weights", "w.npy", "--border-value", "1e300"},
         "--border-value must be a finite float32 number"},
        {{"x.npy", "--weights", "w.npy", "--depth", "u8"}, "--depth appl"},
        {{"x.npy", "--weights", "w.npy", "--gpu-threads", "2"}, "--gpu-threads appl"},
    };
    for (const Case& c : cases) {
        std::vector<std::string> args = c.args;
        args.insert(args.end(), {"-o", "out.npy"});
        const auto r = run_cudaconv(args, dir.path());
        INFO(r.err);
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Contains(c.message));
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK_FALSE(fs::exists(dir / "out.npy"));
    }
    const auto png = run_cudaconv({"x.npy", "--weights", "w.npy", "-o", "out.png"}, dir.path());
    CHECK(png.exit_code == 2);
    CHECK_THAT(png.err, Catch::Contains("out.png: a layer writes an (H, W, C_out) float32 .npy"));
}

TEST_CASE("layer: an input that fails once read fails alone, exit 1", "[cli][layer]") {
    TempDir dir;
    write_layer(dir.path());
    write_npy(dir / "a.npy", {4, 4, 3}, ramp(48, 0.1f));
    const std::string good = read_bytes(dir / "a.npy");
    write_file(dir / "b.npy", good.substr(0, good.size() - 4));  // its header reads well
    const auto r = run_cudaconv({"a.npy", "b.npy", "--weights", "w.npy", "-o", "out/"}, dir.path());
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.err, Catch::Contains("b.npy: cannot decode NPY data: 188 bytes of data where the "
                                      "shape needs 192 (truncated)"));
    CHECK(fs::exists(dir / "out/a.npy"));
    CHECK_FALSE(fs::exists(dir / "out/b.npy"));
}

TEST_CASE("layer: auto times cudnn and mma on the first input and runs the faster",
          "[cli][layer][gpu]") {
    if (skip_without_device()) return;
    TempDir dir;
    // 112x112, 512 -> 512 channels: 3e10 multiply-adds a run, and enough
    // runs that auto's CPU estimate (1e10 a core a second, --warmup and
    // --repeat counted) passes its half second on this machine's cores.
    constexpr std::int64_t kSide = 112, kChannels = 512;
    write_npy(dir / "w.npy", {3, 3, kChannels, kChannels},
              ramp(3 * 3 * kChannels * kChannels, 0.0013f));
    write_npy(dir / "a.npy", {kSide, kSide, kChannels}, ramp(kSide * kSide * kChannels, 0.0007f));
    write_npy(dir / "b.npy", {kSide, kSide, kChannels}, ramp(kSide * kSide * kChannels, 0.0011f));
    const int repeat = static_cast<int>(std::thread::hardware_concurrency()) / 4 + 2;
    const auto r = run_cudaconv({"a.npy", "b.npy", "--weights", "w.npy", "-k", "auto", "-v",
                                 "--repeat", std::to_string(repeat), "-o", "out/", "--json", "-"},
                                dir.path());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    // Both timed once (-v: the two inputs share a size), unless one cannot
    // run here; the faster chosen, and both inputs run on it.
    const std::regex timed("auto: (cudnn|mma) \\([^)]*\\) takes ([0-9.]+) ms");
    std::map<std::string, double> ms;
    int timings = 0;
    for (auto it = std::sregex_iterator(r.err.begin(), r.err.end(), timed);
         it != std::sregex_iterator(); ++it, ++timings) {
        ms[(*it)[1]] = std::stod((*it)[2]);
    }
    std::string expected;
    if (r.err.find("auto: cudnn cannot run") != std::string::npos) {
        expected = "mma";
    } else if (r.err.find("auto: mma cannot run") != std::string::npos) {
        expected = "cudnn";
    }
    if (expected.empty()) {
        REQUIRE(timings == 2);
        REQUIRE(ms.size() == 2);
        expected = ms["cudnn"] < ms["mma"] ? "cudnn" : "mma";
    } else {
        CHECK(timings == 0);
    }
    const auto lines = json_by_input(r.out);
    REQUIRE(lines.size() == 2);
    for (const auto& [input, line] : lines) {
        INFO(input);
        CHECK(line["variant"] == expected);
    }
}

}  // namespace cudaconv::test
