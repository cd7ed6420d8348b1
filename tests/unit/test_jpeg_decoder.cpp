// nvJPEG: the loader's reasons (no GPU needed), and, on the GPU machine,
// each backend's decode against OpenCV's (libjpeg-turbo): the same size and
// channels, and samples within a bound measured on an H100 (max-abs 16,
// mean-abs 0.52, in 4:2:0 colour; gray and the sample photo 0 to 3
// levels); a corrupt image fails alone in its batch; the JPEGs nvJPEG does
// not take are refused with a reason, for the CPU decoder.
#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <memory>
#include <iostream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include "kernels/codecs/jpeg_batch.hpp"
#include "kernels/codecs/jpeg_decoder.hpp"
#include "kernels/codecs/nvjpeg_loader.hpp"
#include "kernels/runtime/cuda_check.hpp"
#include "kernels/runtime/cuda_resources.hpp"
#include "support/skip_without_device.hpp"
#include "support/source_dir.hpp"

using namespace cudaconv;
using Catch::Matchers::Contains;

TEST_CASE("nvJPEG loads with every function, or says why not", "[nvjpeg]") {
    const NvjpegLibrary& library = load_nvjpeg();
    if (!library.api) {
        INFO("nvJPEG is not usable here: " << library.problem);
        CHECK_THAT(library.problem, Contains("LD_LIBRARY_PATH"));
        return;
    }
    INFO("loaded " << library.path);
    CHECK(library.problem.empty());
    CHECK(library.major >= 12);
#define CUDACONV_CHECK_RESOLVED(name, params) CHECK(library.api->name != nullptr);
    CUDACONV_NVJPEG_FUNCTIONS(CUDACONV_CHECK_RESOLVED)
#undef CUDACONV_CHECK_RESOLVED
    CHECK(load_nvjpeg().api == library.api);  // opened once
}

TEST_CASE("nvJPEG's loader names what it could not use", "[nvjpeg]") {
    const NvjpegLibrary missing = open_nvjpeg({"libcudaconv-no-such-nvjpeg.so.13"});
    CHECK_FALSE(missing.api);
    CHECK_THAT(missing.problem, Contains("nvJPEG not found") && Contains("LD_LIBRARY_PATH") &&
                                    Contains("libcudaconv-no-such-nvjpeg.so.13"));
    // A library that loads but is not nvJPEG.
    const NvjpegLibrary wrong = open_nvjpeg({"libm.so.6"});
    CHECK_FALSE(wrong.api);
    CHECK_THAT(wrong.problem, Contains("lacks nvjpegGetProperty") && Contains("more functions"));
    CHECK(nvjpeg_status_name(nvj::NVJPEG_STATUS_BAD_JPEG) == "NVJPEG_STATUS_BAD_JPEG");
    CHECK(nvjpeg_status_name(static_cast<nvj::nvjpegStatus_t>(99)) == "nvJPEG status 99");
}

namespace {

std::vector<unsigned char> encode_jpeg(const cv::Mat& image, std::vector<int> params) {
    std::vector<unsigned char> bytes;
    REQUIRE(cv::imencode(".jpg", image, bytes, params));
    return bytes;
}

// The test JPEGs: the sample photo as it is, and the sample PNGs encoded
// by OpenCV, colour and gray.
struct TestJpeg {
    std::string name;
    std::vector<unsigned char> bytes;
};

std::vector<TestJpeg> test_jpegs() {
    const std::string images = (cudaconv::test::source_dir() / "images").string() + "/";
    std::vector<TestJpeg> out;
    std::ifstream photo(images + "rocket.jpg", std::ios::binary);
    REQUIRE(photo);
    out.push_back({"rocket.jpg", std::vector<unsigned char>(std::istreambuf_iterator<char>(photo),
                                                            std::istreambuf_iterator<char>())});
    const cv::Mat chelsea = cv::imread(images + "chelsea.png", cv::IMREAD_COLOR);
    const cv::Mat camera = cv::imread(images + "camera.png", cv::IMREAD_GRAYSCALE);
    REQUIRE_FALSE(chelsea.empty());
    REQUIRE_FALSE(camera.empty());
    // OpenCV 4.6 writes 4:2:0 (libjpeg's default) at every quality.
    out.push_back({"chelsea q90 4:2:0", encode_jpeg(chelsea, {cv::IMWRITE_JPEG_QUALITY, 90})});
    out.push_back({"chelsea q100 4:2:0", encode_jpeg(chelsea, {cv::IMWRITE_JPEG_QUALITY, 100})});
    out.push_back({"camera gray q90", encode_jpeg(camera, {cv::IMWRITE_JPEG_QUALITY, 90})});
    return out;
}

// The image nvJPEG decodes from `bytes`, downloaded.
cv::Mat gpu_decode(GpuJpegDecoder& decoder, const std::vector<unsigned char>& bytes,
                   std::string* message = nullptr) {
    const JpegInspection seen = decoder.inspect(bytes.data(), bytes.size());
    REQUIRE(seen.refusal.empty());
    const std::size_t pitch = static_cast<std::size_t>(seen.width) * seen.channels;
    auto device = device_array<unsigned char>(pitch * seen.height);
    const Stream stream;
    const std::vector<std::string> messages = decoder.decode(
        {{bytes.data(), bytes.size(), device.get(), pitch, seen.channels}}, stream.get());
    REQUIRE(messages.size() == 1);
    if (message) *message = messages[0];
    cv::Mat out(seen.height, seen.width, seen.channels == 1 ? CV_8UC1 : CV_8UC3);
    CUDA_CHECK(cudaMemcpy2D(out.data, out.step, device.get(), pitch, pitch, seen.height,
                            cudaMemcpyDeviceToHost));
    return out;
}

// A decoder of each backend this machine can start; the others say why
// not. Empty, with the line CTest counts as skipped, where there is no
// device or no nvJPEG.
std::vector<std::unique_ptr<GpuJpegDecoder>> gpu_decoders() {
    std::vector<std::unique_ptr<GpuJpegDecoder>> out;
    if (test::skip_without_device()) return out;
    if (!load_nvjpeg().api) {
        std::cout << "SKIPPED: no CUDA device (nvJPEG: " << load_nvjpeg().problem << ")\n";
        return out;
    }
    for (JpegBackend backend : {JpegBackend::hardware, JpegBackend::gpu_hybrid}) {
        try {
            out.push_back(std::make_unique<GpuJpegDecoder>(backend));
        } catch (const CudaError& e) {
            std::cout << "nvJPEG " << jpeg_backend_name(backend) << ": " << e.what() << "\n";
        }
    }
    REQUIRE_FALSE(out.empty());
    return out;
}

}  // namespace

TEST_CASE("nvJPEG decodes the sample JPEGs as libjpeg-turbo does, within the bound",
          "[gpu][nvjpeg]") {
    for (const auto& each : gpu_decoders()) {
        GpuJpegDecoder& decoder = *each;
        for (const TestJpeg& jpeg : test_jpegs()) {
            const cv::Mat cpu = cv::imdecode(jpeg.bytes, cv::IMREAD_UNCHANGED);
            std::string message;
            const cv::Mat gpu = gpu_decode(decoder, jpeg.bytes, &message);
            INFO(jpeg_backend_name(decoder.backend()) << ", " << jpeg.name);
            REQUIRE(message.empty());
            REQUIRE(gpu.size() == cpu.size());
            REQUIRE(gpu.type() == cpu.type());
            cv::Mat diff;
            cv::absdiff(gpu, cpu, diff);
            double max_abs = 0;
            cv::minMaxLoc(diff.reshape(1), nullptr, &max_abs);
            const double mean_abs = cv::mean(diff.reshape(1))[0];
            const double differing =
                static_cast<double>(cv::countNonZero(diff.reshape(1))) / diff.reshape(1).total();
            std::cout << "nvJPEG " << jpeg_backend_name(decoder.backend()) << " vs libjpeg-turbo, "
                      << jpeg.name << ": max-abs " << max_abs << ", mean-abs " << mean_abs
                      << ", samples differing " << 100.0 * differing << "%\n";
            CHECK(max_abs <= 20);
            CHECK(mean_abs <= 1.0);
        }
    }
}

TEST_CASE("nvJPEG: a corrupt JPEG fails alone in its batch", "[gpu][nvjpeg]") {
    const std::vector<TestJpeg> jpegs = test_jpegs();
    const std::vector<unsigned char>& good = jpegs[1].bytes;  // chelsea 4:2:0
    // A JPEG with nothing between its start and end markers: nvJPEG fails
    // it whole. (Damaged scan data, as libjpeg-turbo also does, it decodes
    // to what it can; truncated files never reach it, format_probe.cpp
    // refuses them first.)
    const std::vector<unsigned char> bad{0xFF, 0xD8, 0xFF, 0xD9};
    for (const auto& each : gpu_decoders()) {
        GpuJpegDecoder& decoder = *each;
        const JpegInspection seen = decoder.inspect(good.data(), good.size());
        REQUIRE(seen.refusal.empty());
        const std::size_t pitch = static_cast<std::size_t>(seen.width) * 3;
        const std::size_t bytes = pitch * seen.height;
        auto device = device_array<unsigned char>(3 * bytes);
        const Stream stream;
        const std::vector<std::string> messages =
            decoder.decode({{good.data(), good.size(), device.get(), pitch, 3},
                            {bad.data(), bad.size(), device.get() + bytes, pitch, 3},
                            {good.data(), good.size(), device.get() + 2 * bytes, pitch, 3}},
                           stream.get());
        INFO(jpeg_backend_name(decoder.backend()));
        REQUIRE(messages.size() == 3);
        CHECK(messages[0].empty());
        CHECK(messages[2].empty());
        CHECK_THAT(messages[1], Contains("cannot decode it"));
        // The good ones are whole: the same as decoding them alone.
        cv::Mat first(seen.height, seen.width, CV_8UC3), third(seen.height, seen.width, CV_8UC3);
        CUDA_CHECK(cudaMemcpy(first.data, device.get(), bytes, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(third.data, device.get() + 2 * bytes, bytes, cudaMemcpyDeviceToHost));
        const cv::Mat alone = gpu_decode(decoder, good);
        CHECK(cv::norm(first, alone, cv::NORM_INF) == 0);
        CHECK(cv::norm(third, alone, cv::NORM_INF) == 0);
    }
}

TEST_CASE("nvJPEG refuses what it does not take, with a reason", "[gpu][nvjpeg]") {
    const std::string images = (cudaconv::test::source_dir() / "images").string() + "/";
    const cv::Mat chelsea = cv::imread(images + "chelsea.png", cv::IMREAD_COLOR);
    const std::vector<unsigned char> progressive =
        encode_jpeg(chelsea, {cv::IMWRITE_JPEG_PROGRESSIVE, 1});
    const std::vector<unsigned char> png = [&] {
        std::vector<unsigned char> bytes;
        REQUIRE(cv::imencode(".png", chelsea, bytes));
        return bytes;
    }();
    const std::vector<unsigned char> truncated(progressive.begin(), progressive.begin() + 40);
    for (const auto& each : gpu_decoders()) {
        GpuJpegDecoder& decoder = *each;
        INFO(jpeg_backend_name(decoder.backend()));
        CHECK_THAT(decoder.inspect(progressive.data(), progressive.size()).refusal,
                   Contains("progressive"));
        CHECK_THAT(decoder.inspect(png.data(), png.size()).refusal, Contains("cannot parse"));
        CHECK_FALSE(decoder.inspect(truncated.data(), truncated.size()).refusal.empty());
    }
}

TEST_CASE("GPU JPEG batches reuse their image buffers: as many as held at once, none freed",
          "[gpu][nvjpeg]") {
    if (test::skip_without_device()) return;
    if (!load_nvjpeg().api) {
        std::cout << "SKIPPED: no CUDA device (nvJPEG: " << load_nvjpeg().problem << ")\n";
        return;
    }
    const std::vector<TestJpeg> jpegs = test_jpegs();
    const std::vector<unsigned char>& photo = jpegs[1].bytes;  // chelsea 4:2:0
    // Nothing kept past what the images have held at once.
    GpuJpegBatch batch(0);
    const JpegInspection seen = batch.inspect(photo.data(), photo.size());
    REQUIRE(seen.refusal.empty());
    // Five groups of four, each held until the next group is decoded, as
    // the GPU thread holds images while the decoder works ahead: eight
    // buffers at most, made once.
    std::vector<GpuJpegImage> held(4), next(4);
    for (int group = 0; group < 5; ++group) {
        std::vector<GpuJpegImage*> call;
        for (GpuJpegImage& image : next) {
            image = GpuJpegImage{photo.data(), photo.size(), seen, nullptr, 0, {}};
            call.push_back(&image);
        }
        batch.decode(call);
        for (const GpuJpegImage& image : next) {
            CHECK(image.error.empty());
            CHECK(image.device_pixels != nullptr);
        }
        std::swap(held, next);
    }
    CHECK_THAT(batch.buffers_summary(), Contains("8 buffers made, 0 freed"));
}
