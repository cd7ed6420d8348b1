// The CPU's JPEG writer (io/jpeg_writer.hpp): at 4:2:0 the very bytes
// cv::imencode writes, so that outputs and goldens are what they were; the
// chroma sampling asked for in the frame header, and colour edges kept
// sharper at 4:4:4; gray images with one component whatever is asked;
// files past the 64 KB its buffer starts with.
#include <catch2/catch.hpp>

#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "io/jpeg_writer.hpp"
#include "support/jpeg_frame.hpp"
#include "support/random_image.hpp"
#include "support/source_dir.hpp"

namespace cudaconv::test {
namespace {

cv::Mat sample_photo() {
    cv::Mat photo = cv::imread((source_dir() / "images/chelsea.png").string(), cv::IMREAD_COLOR);
    REQUIRE(!photo.empty());
    return photo;
}

std::vector<std::uint8_t> opencv_jpeg(const cv::Mat& image, int quality) {
    std::vector<std::uint8_t> bytes;
    REQUIRE(cv::imencode(".jpg", image, bytes, {cv::IMWRITE_JPEG_QUALITY, quality}));
    return bytes;
}

double max_abs_after_decoding(const std::vector<std::uint8_t>& file, const cv::Mat& source) {
    const cv::Mat decoded = cv::imdecode(file, cv::IMREAD_UNCHANGED);
    REQUIRE(decoded.size() == source.size());
    double max_abs = 0;
    cv::minMaxLoc(cv::abs(decoded - source), nullptr, &max_abs);
    return max_abs;
}

}  // namespace

TEST_CASE("jpeg writer: at 4:2:0 the bytes cv::imencode writes", "[jpeg_writer]") {
    const cv::Mat photo = sample_photo();
    cv::Mat gray;
    cv::cvtColor(photo, gray, cv::COLOR_BGR2GRAY);
    // Odd sizes: partial MCUs at the right and bottom edges.
    const cv::Mat noise = random_image(37, 21, CV_8UC3, 7);
    for (const cv::Mat* image : std::initializer_list<const cv::Mat*>{&photo, &gray, &noise}) {
        for (int quality : {0, 10, 75, 95, 100}) {
            CAPTURE(image->cols, image->channels(), quality);
            JpegSettings settings;
            settings.quality = quality;
            CHECK(encode_jpeg(*image, settings) == opencv_jpeg(*image, quality));
        }
    }
    // Past the first 64 KB of the writer's buffer, which then grows.
    CHECK(encode_jpeg(photo, {100, ChromaSampling::s420}).size() > 64 * 1024);
    // A view into a larger image: rows a step apart wider than the pixels.
    const cv::Mat crop = photo(cv::Rect(13, 7, 101, 55));
    CHECK(encode_jpeg(crop, {}) == opencv_jpeg(crop.clone(), 95));
}

TEST_CASE("jpeg writer: the chroma sampling asked for, in the frame header", "[jpeg_writer]") {
    const cv::Mat photo = sample_photo();
    struct Case {
        ChromaSampling sampling;
        int luma_h, luma_v;
    };
    for (const Case c : {Case{ChromaSampling::s420, 2, 2}, Case{ChromaSampling::s422, 2, 1},
                         Case{ChromaSampling::s444, 1, 1}}) {
        CAPTURE(chroma_sampling_name(c.sampling));
        JpegSettings settings;
        settings.sampling = c.sampling;
        const std::vector<JpegComponent> components = jpeg_components(encode_jpeg(photo, settings));
        REQUIRE(components.size() == 3);
        CHECK(components[0].h == c.luma_h);
        CHECK(components[0].v == c.luma_v);
        for (int chroma : {1, 2}) {
            CHECK(components[chroma].h == 1);
            CHECK(components[chroma].v == 1);
        }
    }
    cv::Mat gray;
    cv::cvtColor(photo, gray, cv::COLOR_BGR2GRAY);
    JpegSettings full;
    full.sampling = ChromaSampling::s444;
    const std::vector<JpegComponent> gray_components = jpeg_components(encode_jpeg(gray, full));
    REQUIRE(gray_components.size() == 1);
    CHECK(gray_components[0].h == 1);
    CHECK(gray_components[0].v == 1);
}

TEST_CASE("jpeg writer: 4:4:4 keeps a colour edge that 4:2:0 smears", "[jpeg_writer]") {
    // A red square on blue, starting at an odd column and row: 4:2:0 shares
    // one chroma sample between the edge's two sides.
    cv::Mat image(64, 64, CV_8UC3, cv::Scalar(255, 0, 0));
    image(cv::Rect(17, 17, 30, 30)).setTo(cv::Scalar(0, 0, 255));
    JpegSettings settings;
    settings.quality = 100;
    const double at_420 = max_abs_after_decoding(encode_jpeg(image, settings), image);
    settings.sampling = ChromaSampling::s444;
    const double at_444 = max_abs_after_decoding(encode_jpeg(image, settings), image);
    CAPTURE(at_420, at_444);
    CHECK(at_444 < 16);
    CHECK(at_420 > 3 * at_444);
}

TEST_CASE("jpeg writer: refuses what JPEG does not hold", "[jpeg_writer]") {
    CHECK_THROWS_AS(encode_jpeg(cv::Mat(8, 8, CV_16UC3, cv::Scalar::all(1)), {}),
                    std::invalid_argument);
    CHECK_THROWS_AS(encode_jpeg(cv::Mat(8, 8, CV_8UC4, cv::Scalar::all(1)), {}),
                    std::invalid_argument);
    CHECK_THROWS_AS(encode_jpeg(cv::Mat(), {}), std::invalid_argument);
    // libjpeg's own refusal, with its words (and nothing leaked: the asan
    // build's leak check runs this).
    CHECK_THROWS_WITH(encode_jpeg(cv::Mat(1, 70000, CV_8UC1, cv::Scalar(9)), {}),
                      Catch::Contains("65500"));
}

}  // namespace cudaconv::test
