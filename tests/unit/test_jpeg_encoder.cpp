// JPEG encoded on the device by nvJPEG (kernels/codecs/jpeg_encoder.hpp),
// decoded back by OpenCV: the sampling asked for in the frame header, gray
// as one component, rows with padding, odd sizes; and the file within a
// measured distance of the CPU writer's (io/jpeg_writer.hpp) in quality
// (PSNR against the source) and size; the same files through the handle of
// the device's decoder as through the encoder's own. Without a device or
// nvJPEG these tests print "SKIPPED: no CUDA device" and CTest reports them
// as skipped.
#include <catch2/catch.hpp>

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <iostream>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "io/jpeg_writer.hpp"
#include "kernels/codecs/jpeg_batch.hpp"
#include "kernels/codecs/jpeg_encoder.hpp"
#include "kernels/codecs/nvjpeg_loader.hpp"
#include "kernels/runtime/cuda_check.hpp"
#include "kernels/runtime/cuda_resources.hpp"
#include "support/jpeg_frame.hpp"
#include "support/device_image.hpp"
#include "support/skip_without_device.hpp"
#include "support/source_dir.hpp"

namespace cudaconv::test {
namespace {

bool skip_without_encoder() {
    if (skip_without_device()) return true;
    if (load_nvjpeg().api) return false;
    std::cout << "SKIPPED: no CUDA device (nvJPEG: " << load_nvjpeg().problem << ")\n";
    return true;
}

// The image on the device with rows `pad` bytes longer than its pixels,
// encoded there.
std::vector<std::uint8_t> encode_on_device(const cv::Mat& image, const JpegSettings& settings,
                                           std::size_t pad = 48) {
    const DeviceImage d = device_image(image, pad);
    const Stream stream;
    return encode_jpeg_on_device(d.rows, settings, stream.get());
}

double psnr_after_decoding(const std::vector<std::uint8_t>& file, const cv::Mat& source) {
    const cv::Mat decoded = cv::imdecode(file, cv::IMREAD_UNCHANGED);
    REQUIRE(decoded.type() == source.type());
    REQUIRE(decoded.size() == source.size());
    return cv::PSNR(decoded, source);
}

cv::Mat sample_photo(int flags) {
    cv::Mat photo = cv::imread((source_dir() / "images/chelsea.png").string(), flags);
    REQUIRE(!photo.empty());
    return photo;
}

}  // namespace

TEST_CASE("nvJPEG encoder: the sampling asked for, gray as one component, odd sizes",
          "[gpu][nvjpeg]") {
    if (skip_without_encoder()) return;
    const cv::Mat colour = sample_photo(cv::IMREAD_COLOR);
    const cv::Mat gray = sample_photo(cv::IMREAD_GRAYSCALE);
    const cv::Mat odd = colour(cv::Rect(101, 57, 37, 21)).clone();
    struct Case {
        ChromaSampling sampling;
        int luma_h, luma_v;
    };
    for (const Case c : {Case{ChromaSampling::s420, 2, 2}, Case{ChromaSampling::s422, 2, 1},
                         Case{ChromaSampling::s444, 1, 1}}) {
        CAPTURE(chroma_sampling_name(c.sampling));
        JpegSettings settings;
        settings.sampling = c.sampling;
        for (const cv::Mat* image : {&colour, &odd}) {
            CAPTURE(image->cols);
            const std::vector<std::uint8_t> file = encode_on_device(*image, settings);
            const std::vector<JpegComponent> components = jpeg_components(file);
            REQUIRE(components.size() == 3);
            CHECK(components[0].h == c.luma_h);
            CHECK(components[0].v == c.luma_v);
            CHECK(components[1].h * components[1].v == 1);
            CHECK(components[2].h * components[2].v == 1);
            CHECK(psnr_after_decoding(file, *image) >
                  psnr_after_decoding(encode_jpeg(*image, settings), *image) - 1.0);
        }
        const std::vector<std::uint8_t> gray_file = encode_on_device(gray, settings);
        CHECK(jpeg_components(gray_file).size() == 1);
        CHECK(psnr_after_decoding(gray_file, gray) >
              psnr_after_decoding(encode_jpeg(gray, settings), gray) - 1.0);
    }
}

TEST_CASE("nvJPEG encoder: as close to the source as the CPU's writer, and as small",
          "[gpu][nvjpeg]") {
    if (skip_without_encoder()) return;
    const cv::Mat colour = sample_photo(cv::IMREAD_COLOR);
    const cv::Mat gray = sample_photo(cv::IMREAD_GRAYSCALE);
    cv::Mat edges;  // what cudaconv mostly writes: a filtered image
    cv::Laplacian(colour, edges, CV_8U, 3, 1, 128);
    for (const cv::Mat* image : std::initializer_list<const cv::Mat*>{&colour, &gray, &edges}) {
        for (int quality : {50, 75, 95}) {
            for (ChromaSampling sampling : {ChromaSampling::s420, ChromaSampling::s444}) {
                JpegSettings settings;
                settings.quality = quality;
                settings.sampling = sampling;
                const std::vector<std::uint8_t> gpu = encode_on_device(*image, settings);
                const std::vector<std::uint8_t> cpu = encode_jpeg(*image, settings);
                const double gpu_psnr = psnr_after_decoding(gpu, *image);
                const double cpu_psnr = psnr_after_decoding(cpu, *image);
                const double size_ratio = static_cast<double>(gpu.size()) / cpu.size();
                std::cout << "nvJPEG vs libjpeg, " << image->channels() << "ch q" << quality << " "
                          << chroma_sampling_name(sampling) << ": PSNR " << gpu_psnr << " vs "
                          << cpu_psnr << " dB, size x" << size_ratio << "\n";
                CAPTURE(image->channels(), quality, gpu_psnr, cpu_psnr, size_ratio);
                CHECK(gpu_psnr > cpu_psnr - 1.0);
                CHECK(size_ratio < 1.25);
            }
        }
    }
    // Quality orders the files as it orders libjpeg's.
    JpegSettings low, high;
    low.quality = 30;
    high.quality = 95;
    CHECK(encode_on_device(colour, low).size() < encode_on_device(colour, high).size());
}

TEST_CASE("nvJPEG encoder: takes its device's decoder's handle while it lives, same files",
          "[gpu][nvjpeg]") {
    if (skip_without_encoder()) return;
    const cv::Mat colour = sample_photo(cv::IMREAD_COLOR);
    const cv::Mat gray = sample_photo(cv::IMREAD_GRAYSCALE);
    const JpegSettings settings;
    release_jpeg_encoder();
    const std::vector<std::uint8_t> own_colour = encode_on_device(colour, settings);
    const std::vector<std::uint8_t> own_gray = encode_on_device(gray, settings);
    CHECK_FALSE(jpeg_encoder_shares_decoder_handle());
    release_jpeg_encoder();
    {
        const GpuJpegBatch decoder;  // offers its handle on this device
        CHECK(encode_on_device(colour, settings) == own_colour);
        CHECK(jpeg_encoder_shares_decoder_handle());
    }
    // The handle outlives the decoder while the encoder holds it.
    CHECK(encode_on_device(gray, settings) == own_gray);
    CHECK(jpeg_encoder_shares_decoder_handle());
    release_jpeg_encoder();
    // A decoder gone offers nothing: the next encoder makes its own.
    CHECK(encode_on_device(colour, settings) == own_colour);
    CHECK_FALSE(jpeg_encoder_shares_decoder_handle());
    release_jpeg_encoder();
}

TEST_CASE("nvJPEG encoder: says what it cannot take", "[nvjpeg]") {
    CHECK(jpeg_on_device_problem(64, 64, 3, Depth::u16) == "JPEG holds 8-bit samples");
    CHECK(jpeg_on_device_problem(64, 64, 4, Depth::u8) == "JPEG holds 1 or 3 channels");
    CHECK(jpeg_on_device_problem(70000, 64, 3, Depth::u8) ==
          "JPEG holds sides of 1 to 65500 pixels");
    CHECK(jpeg_on_device_problem(65501, 64, 3, Depth::u8) ==
          "JPEG holds sides of 1 to 65500 pixels");
    CHECK(jpeg_on_device_problem(64, 64, 3, Depth::u8) == load_nvjpeg().problem);
}

}  // namespace cudaconv::test
