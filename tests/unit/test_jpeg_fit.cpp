// io/jpeg_fit.hpp: RGBA flattened onto a background and 16-bit samples
// scaled to 8 for a JPEG output, held to the formula computed here in
// double, sample by sample.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include <opencv2/core.hpp>

#include "base/errors.hpp"
#include "io/jpeg_fit.hpp"

namespace cudaconv {
namespace {

cv::Mat random_mat(int type, unsigned seed) {
    cv::Mat m(37, 53, type);
    cv::RNG rng(seed);
    rng.fill(m, cv::RNG::UNIFORM, 0, m.depth() == CV_16U ? 65536 : 256);
    return m;
}

// round((c*a + b*(m-a))/m * 255/m), b the 8-bit background scaled to m;
// halves to even, as OpenCV's saturate_cast rounds.
cv::Mat reference(const cv::Mat& image, const Rgb8& rgb) {
    const double m = image.depth() == CV_16U ? 65535.0 : 255.0;
    cv::Mat f;
    image.convertTo(f, CV_64F);
    cv::Mat out(image.rows, image.cols, CV_8UC3);
    for (int y = 0; y < image.rows; ++y) {
        for (int x = 0; x < image.cols; ++x) {
            const double* p = f.ptr<double>(y) + 4 * x;
            for (int c = 0; c < 3; ++c) {
                const double b = rgb[2 - c] * m / 255.0;
                const double v = (p[c] * p[3] + b * (m - p[3])) / m * 255.0 / m;
                out.ptr<std::uint8_t>(y)[3 * x + c] =
                    static_cast<std::uint8_t>(std::min(255.0, std::nearbyint(v)));
            }
        }
    }
    return out;
}

}  // namespace

TEST_CASE("jpeg_fit: RGBA flattened onto the background, u8 and u16", "[jpeg_fit]") {
    for (const int type : {CV_8UC4, CV_16UC4}) {
        for (const Rgb8& bg : {kWhite, Rgb8{0, 0, 0}, Rgb8{18, 200, 77}}) {
            INFO(type << " " << int(bg[0]) << "," << int(bg[1]) << "," << int(bg[2]));
            cv::Mat image = random_mat(type, 7);
            // Opaque and transparent rows besides the random alphas.
            for (int x = 0; x < image.cols; ++x) {
                if (type == CV_8UC4) {
                    image.at<cv::Vec4b>(0, x)[3] = 255;
                    image.at<cv::Vec4b>(1, x)[3] = 0;
                } else {
                    image.at<cv::Vec4w>(0, x)[3] = 65535;
                    image.at<cv::Vec4w>(1, x)[3] = 0;
                }
            }
            const cv::Mat fitted = fit_for_jpeg(image, bg);
            REQUIRE(fitted.type() == CV_8UC3);
            CHECK(cv::norm(fitted, reference(image, bg), cv::NORM_INF) == 0);
            // Transparent pixels are the background; opaque ones their colour.
            const cv::Vec3b first = fitted.at<cv::Vec3b>(1, 0);
            CHECK(first == cv::Vec3b(bg[2], bg[1], bg[0]));
            if (type == CV_8UC4) {
                const cv::Vec4b src = image.at<cv::Vec4b>(0, 5);
                CHECK(fitted.at<cv::Vec3b>(0, 5) == cv::Vec3b(src[0], src[1], src[2]));
            }
        }
    }
}

TEST_CASE("jpeg_fit: 16-bit samples scaled to 8, gray and colour", "[jpeg_fit]") {
    for (const int type : {CV_16UC1, CV_16UC3}) {
        const cv::Mat image = random_mat(type, 11);
        const cv::Mat fitted = fit_for_jpeg(image, kWhite);
        REQUIRE(fitted.depth() == CV_8U);
        REQUIRE(fitted.channels() == image.channels());
        for (int y = 0; y < image.rows; ++y) {
            for (int i = 0; i < image.cols * image.channels(); ++i) {
                const double v = image.ptr<std::uint16_t>(y)[i] / 257.0;
                REQUIRE(fitted.ptr<std::uint8_t>(y)[i] == std::nearbyint(v));
            }
        }
    }
    // Nothing to do for u8 gray or colour: the same pixels, not a copy.
    const cv::Mat u8 = random_mat(CV_8UC3, 3);
    CHECK(fit_for_jpeg(u8, kWhite).data == u8.data);
    // Float, with or without alpha, is left for the format check to refuse.
    const cv::Mat f32(4, 4, CV_32FC4, cv::Scalar(0.5, 0.5, 0.5, 1));
    CHECK(fit_for_jpeg(f32, kWhite).data == f32.data);
}

TEST_CASE("jpeg_fit: what converts, and the background's spelling", "[jpeg_fit]") {
    CHECK(!jpeg_fit(3, Depth::u8).converts());
    CHECK(!jpeg_fit(1, Depth::f32).converts());  // float is the user's to scale
    CHECK(jpeg_fit(4, Depth::u16).what("white") ==
          "alpha flattened onto white, 16-bit samples scaled to 8");
    CHECK(jpeg_fit(3, Depth::u16).what("black") == "16-bit samples scaled to 8");
    CHECK(parse_background("White") == kWhite);
    CHECK(parse_background("black") == Rgb8{0, 0, 0});
    CHECK(parse_background("#12c84D") == Rgb8{0x12, 0xc8, 0x4d});
    for (const char* bad : {"", "pink", "#12345", "#1234567", "#12g456", "12c84d"}) {
        INFO(bad);
        CHECK_THROWS_WITH(parse_background(bad),
                          Catch::Contains("not a colour (white, black or #RRGGBB)"));
    }
}

}  // namespace cudaconv
