// JPEG outputs: --jpeg-sampling is honoured by whichever encoder writes the
// file, --encoder gpu with JPEG outputs is refused before any work where
// nvJPEG does not load, and on a GPU machine each image says which encoder
// wrote it, the GPU's files decoding as close to the filtered pixels as
// the CPU's.
#include <catch2/catch.hpp>

#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include "kernels/codecs/gpu_jpeg_encoder.hpp"
#include "support/files.hpp"
#include "support/jpeg_frame.hpp"
#include "support/json_lines.hpp"
#include "support/run_command.hpp"
#include "support/skip_without_device.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;

namespace cudaconv::test {
namespace {

std::vector<std::uint8_t> file_bytes(const fs::path& path) {
    const std::string bytes = read_bytes(path.string());
    return {bytes.begin(), bytes.end()};
}

cv::Mat read_image(const fs::path& path) {
    cv::Mat m = cv::imread(path.string(), cv::IMREAD_UNCHANGED);
    REQUIRE(!m.empty());
    return m;
}

}  // namespace

TEST_CASE("jpeg outputs: --jpeg-sampling, whichever encoder writes the file", "[cli][encoder]") {
    TempDir dir;
    copy_sample("chelsea.png", dir / "in" / "colour.png");
    copy_sample("camera.png", dir / "in" / "gray.png");
    struct Case {
        const char* sampling;
        int luma_h, luma_v;
    };
    for (const Case c : {Case{"420", 2, 2}, Case{"422", 2, 1}, Case{"444", 1, 1}}) {
        for (const char* encoder : {"auto", "cpu"}) {
            const std::string out = std::string("out-") + c.sampling + "-" + encoder;
            const auto r = run_cudaconv({"in", "-f", "edge", "--jpeg-sampling", c.sampling,
                                         "--encoder", encoder, "-o", out + "/{stem}.jpg"},
                                        dir.path());
            INFO(encoder << " " << c.sampling << ": " << r.err);
            REQUIRE(r.exit_code == 0);
            const std::vector<JpegComponent> colour =
                jpeg_components(file_bytes(dir / out / "colour.jpg"));
            REQUIRE(colour.size() == 3);
            CHECK(colour[0].h == c.luma_h);
            CHECK(colour[0].v == c.luma_v);
            CHECK(jpeg_components(file_bytes(dir / out / "gray.jpg")).size() == 1);
        }
    }
}

TEST_CASE("jpeg outputs: --encoder gpu encodes them on the GPU, or is refused before any work",
          "[cli][encoder]") {
    TempDir dir;
    copy_sample("chelsea.png", dir / "in" / "colour.png");
    copy_sample("camera.png", dir / "in" / "gray.png");
    const std::string problem = gpu_jpeg_encoder_problem();
    const auto r = run_cudaconv(
        {"in", "-f", "gaussian:sigma=1", "--encoder", "gpu", "--json", "-", "-o", "gpu/{stem}.jpg"},
        dir.path());
    INFO(r.err);
    if (!problem.empty()) {
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Contains("--encoder gpu: the GPU cannot encode JPEG here: " + problem));
        CHECK_FALSE(fs::exists(dir / "gpu"));
        return;
    }
    REQUIRE(r.exit_code == 0);
    const auto lines = json_by_input(r.out);
    REQUIRE(lines.size() == 2);
    for (const auto& [input, line] : lines) {
        INFO(input);
        const bool on_cpu = line["variant"].get<std::string>().rfind("cpu", 0) == 0;
        CHECK(line["encoder"] == (on_cpu ? "cpu" : "gpu"));
        CHECK((line["timings_ms"]["gpu_jpeg"].get<double>() > 0.0) == !on_cpu);
    }
}

// The GPU's JPEG of a filtered image against the filtered pixels (a PNG of
// the same run), as close as the CPU's JPEG is, and about as large.
TEST_CASE("jpeg outputs: the GPU's files hold the filtered pixels as well as the CPU's",
          "[cli][encoder][gpu]") {
    if (skip_without_device()) return;
    if (!gpu_jpeg_encoder_problem().empty()) {
        std::cout << "SKIPPED: no CUDA device (" << gpu_jpeg_encoder_problem() << ")\n";
        return;
    }
    TempDir dir;
    copy_sample("chelsea.png", dir / "in" / "colour.png");
    copy_sample("camera.png", dir / "in" / "gray.png");
    for (const char* out : {"png/{stem}.png", "gpu/{stem}.jpg", "cpu/{stem}.jpg"}) {
        const std::string encoder = std::string(out).substr(0, 3) == "cpu" ? "cpu" : "gpu";
        const auto r = run_cudaconv(
            {"in", "-f", "sharpen", "-k", "fast", "--encoder", encoder, "-o", out}, dir.path());
        INFO(out << ": " << r.err);
        REQUIRE(r.exit_code == 0);
    }
    for (const char* stem : {"colour", "gray"}) {
        const cv::Mat filtered = read_image(dir / "png" / (std::string(stem) + ".png"));
        const cv::Mat gpu = read_image(dir / "gpu" / (std::string(stem) + ".jpg"));
        const cv::Mat cpu = read_image(dir / "cpu" / (std::string(stem) + ".jpg"));
        const double gpu_psnr = cv::PSNR(gpu, filtered);
        const double cpu_psnr = cv::PSNR(cpu, filtered);
        const double size_ratio =
            static_cast<double>(fs::file_size(dir / "gpu" / (std::string(stem) + ".jpg"))) /
            fs::file_size(dir / "cpu" / (std::string(stem) + ".jpg"));
        std::cout << "sharpen " << stem << " -> JPEG, GPU vs CPU: PSNR " << gpu_psnr << " vs "
                  << cpu_psnr << " dB, size x" << size_ratio << "\n";
        CAPTURE(stem, gpu_psnr, cpu_psnr, size_ratio);
        CHECK(gpu_psnr > cpu_psnr - 1.0);
        CHECK(size_ratio < 1.25);
    }
}

}  // namespace cudaconv::test
