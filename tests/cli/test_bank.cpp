// Filter banks as users write them (--combine): the gradient magnitude of
// sobel-x and sobel-y, an oriented bank's max and a sum, each against
// OpenCV in double on the sample photos; what a bank cannot mean is refused
// before any work.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <opencv2/imgcodecs.hpp>

#include "core/bank.hpp"
#include "io/npy.hpp"
#include "filters/spec.hpp"
#include "support/files.hpp"
#include "support/opencv_reference.hpp"
#include "support/run_command.hpp"
#include "support/skip_without_device.hpp"

namespace cudaconv::test {
namespace fs = std::filesystem;

namespace {

cv::Mat read(const fs::path& path) { return cv::imread(path.string(), cv::IMREAD_UNCHANGED); }

// The bank's exact result in double (reference_exact: copyMakeBorder and
// filter2D), combined, scaled and rounded with cv::saturate_cast.
cv::Mat expected_bank(const cv::Mat& src, const std::vector<std::string>& specs,
                      const std::string& how, double scale, int out_type) {
    std::vector<cv::Mat> responses;
    for (const std::string& spec : specs) {
        responses.push_back(reference_exact(src, centred_params(parse_filter_spec(spec))));
    }
    cv::Mat combined = cv::Mat::zeros(responses.front().size(), responses.front().type());
    if (how == "max") combined = responses.front().clone();
    for (const cv::Mat& r : responses) {
        if (how == "magnitude") combined += r.mul(r);
        if (how == "sum") combined += r;
        if (how == "max") combined = cv::max(combined, r);
    }
    if (how == "magnitude") cv::sqrt(combined, combined);
    cv::Mat out;
    combined.convertTo(out, out_type, scale);
    return out;
}

}  // namespace

TEST_CASE("bank: magnitude, max and sum equal OpenCV in double", "[cli][bank]") {
    TempDir dir;
    struct Case {
        std::string how;
        std::vector<std::string> filters;
        double scale;
    };
    const std::vector<Case> cases{
        {"magnitude", {"sobel-x", "sobel-y"}, 1.0},
        {"magnitude", {"scharr-x", "scharr-y"}, 0.25},
        {"max", {"prewitt-x", "prewitt-y", "3x3:1,1,1,0,0,0,-1,-1,-1", "edge"}, 1.0},
        {"sum", {"box:3", "gaussian:5", "sharpen"}, 0.5},
    };
    for (const char* sample : {"camera-crop.png", "chelsea-crop.png", "camera16-crop.png"}) {
        copy_sample(sample, dir / sample);
        const cv::Mat src = read(dir / sample);
        for (const Case& c : cases) {
            for (const char* variant : {"cpu-ref", "cpu"}) {
                std::vector<std::string> args{sample,
                                              "--combine",
                                              c.how,
                                              "-k",
                                              variant,
                                              "--scale",
                                              std::to_string(c.scale),
                                              "-o",
                                              "out.png",
                                              "--overwrite"};
                for (const std::string& f : c.filters) args.insert(args.end(), {"-f", f});
                const auto r = run_cudaconv(args, dir.path());
                INFO(sample << " " << c.how << " on " << variant << ": " << r.err);
                REQUIRE(r.exit_code == 0);
                const cv::Mat out = read(dir / "out.png");
                const cv::Mat expected = expected_bank(src, c.filters, c.how, c.scale, out.type());
                CHECK(cv::norm(out, expected, cv::NORM_INF) <= 1.0);
            }
        }
    }
}

TEST_CASE("bank: {filter}, --json and --abs", "[cli][bank]") {
    TempDir dir;
    copy_sample("camera-crop.png", dir / "in.png");
    const auto r =
        run_cudaconv({"in.png", "-f", "sobel-x", "-f", "sobel-y", "--combine", "sum", "--abs",
                      "--depth", "u16", "-o", "{stem}-{filter}.png", "--json", "-"},
                     dir.path());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(fs::exists(dir / "in-sum-sobel-x-sobel-y.png"));
    const auto line = nlohmann::json::parse(r.out.substr(0, r.out.find('\n')));
    CHECK(line["filter"]["spec"] == "sum:sobel-x,sobel-y");
    CHECK(line["filter"]["width"] == 3);
    // |sobel-x + sobel-y|, not |sobel-x| + |sobel-y|.
    const cv::Mat src = read(dir / "in.png");
    cv::Mat expected = cv::abs(expected_bank(src, {"sobel-x", "sobel-y"}, "sum", 1.0, CV_64FC1));
    expected.convertTo(expected, CV_16U);
    CHECK(cv::norm(read(dir / "in-sum-sobel-x-sobel-y.png"), expected, cv::NORM_INF) <= 1.0);
}

TEST_CASE("bank: stack writes every response to .npy, as NumPy reads it", "[cli][bank]") {
    TempDir dir;
    copy_sample("chelsea-alpha-crop.png", dir / "in.png");
    const auto r = run_cudaconv({"in.png", "-f", "sobel-x", "-f", "box:3", "-f", "laplacian",
                                 "--combine", "stack", "-o", "out.npy"},
                                dir.path());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const std::string file = read_bytes(dir / "out.npy");
    const NpyArray array =
        parse_npy(reinterpret_cast<const std::uint8_t*>(file.data()), file.size());
    const cv::Mat src = read(dir / "in.png");
    REQUIRE(array.shape ==
            std::vector<std::int64_t>{src.rows, src.cols, 3 * 3 + 1});  // 3 filters x RGB, alpha
    std::vector<cv::Mat> planes;
    cv::split(src, planes);
    const std::vector<std::string> filters{"sobel-x", "box:3", "laplacian"};
    for (std::size_t k = 0; k < filters.size(); ++k) {
        for (int c = 0; c < 3; ++c) {
            const cv::Mat expected =
                reference_exact(planes[c], centred_params(parse_filter_spec(filters[k])));
            double worst = 0.0;
            for (int y = 0; y < src.rows; ++y) {
                for (int x = 0; x < src.cols; ++x) {
                    // .npy holds RGB: OpenCV's plane c (BGR) is channel 2 - c.
                    const float got = array.data[(static_cast<std::size_t>(y) * src.cols + x) * 10 +
                                                 k * 3 + (2 - c)];
                    worst = std::max(worst, std::abs(got - expected.at<double>(y, x)));
                }
            }
            INFO(filters[k] << ", channel " << c);
            CHECK(worst <= 1e-3);
        }
    }
    // The alpha, unchanged, last.
    for (int y = 0; y < src.rows; ++y) {
        for (int x = 0; x < src.cols; ++x) {
            CHECK(array.data[(static_cast<std::size_t>(y) * src.cols + x) * 10 + 9] ==
                  static_cast<float>(planes[3].at<std::uint8_t>(y, x)));
        }
    }
}

TEST_CASE("bank: what it cannot mean is refused before any work", "[cli][bank]") {
    TempDir dir;
    copy_sample("chelsea-alpha-crop.png", dir / "in.png");
    struct Refusal {
        std::vector<std::string> args;
        std::string says;
    };
    const std::vector<Refusal> refusals{
        {{"-f", "sobel-x", "-f", "sobel-y", "--combine", "mean"},
         "choose magnitude, max, sum or stack"},
        {{"-f", "sobel-x", "-f", "sobel-y", "--combine", "stack"}, "PNG holds 8- or 16-bit"},
        {{"-f", "sobel-x", "-f", "sobel-y", "--combine", "stack", "--depth", "u16"},
         "which only .npy holds"},
        {{"-f", "sobel-x", "-f", "box:5", "--combine", "max", "--border", "valid"},
         "responses of different sizes"},
        {{"-f", "sobel-x", "-f", "sobel-y", "--combine", "sum", "--alpha", "premultiply"},
         "--alpha premultiply"},
        {{"-f", "sobel-x", "-f", "sobel-y", "--combine", "sum", "--anchor", "0,0"},
         "filters of a bank are each centred"},
        {{"-f", "none", "--combine", "sum"}, "--combine"},
        {{"-f", "none", "-f", "edge", "--combine", "sum"}, "cannot be a step"},
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
}

TEST_CASE("bank: on the GPU, equal to cpu-ref", "[cli][bank][gpu]") {
    if (skip_without_device()) return;
    TempDir dir;
    copy_sample("chelsea-alpha-crop.png", dir / "in.png");
    const std::vector<std::string> bank{"in.png",    "-f",         "sobel-x",   "-f",
                                        "sobel-y",   "-f",         "laplacian", "--combine",
                                        "magnitude", "--overwrite"};
    auto on_cpu = bank;
    on_cpu.insert(on_cpu.end(), {"-k", "cpu-ref", "-o", "cpu.png"});
    REQUIRE(run_cudaconv(on_cpu, dir.path()).exit_code == 0);
    for (const char* variant : {"fast", "smem", "naive", "fft"}) {
        INFO(variant);
        auto on_gpu = bank;
        on_gpu.insert(on_gpu.end(), {"-k", variant, "-o", "gpu.png"});
        const auto r = run_cudaconv(on_gpu, dir.path());
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        CHECK(cv::norm(read(dir / "gpu.png"), read(dir / "cpu.png"), cv::NORM_INF) <= 1.0);
    }
}

}  // namespace cudaconv::test
