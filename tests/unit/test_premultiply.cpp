// batch/premultiply.hpp: --alpha premultiply's two steps, against their
// formulas.
#include <catch2/catch.hpp>

#include <opencv2/core.hpp>

#include "batch/premultiply.hpp"

namespace cudaconv {

TEST_CASE("premultiply: colour times alpha over the maximum, alpha kept", "[premultiply]") {
    cv::Mat bgra(1, 3, CV_8UC4);
    bgra.at<cv::Vec4b>(0, 0) = {68, 42, 255, 255};
    bgra.at<cv::Vec4b>(0, 1) = {68, 42, 255, 51};
    bgra.at<cv::Vec4b>(0, 2) = {9, 9, 9, 0};
    const cv::Mat pre = premultiplied(bgra);
    REQUIRE(pre.type() == CV_32FC4);
    CHECK(pre.at<cv::Vec4f>(0, 0) == cv::Vec4f(68, 42, 255, 255));
    CHECK(pre.at<cv::Vec4f>(0, 1)[0] == Approx(68 * 51 / 255.0));
    CHECK(pre.at<cv::Vec4f>(0, 1)[3] == 51.0f);
    CHECK(pre.at<cv::Vec4f>(0, 2) == cv::Vec4f(0, 0, 0, 0));
}

TEST_CASE("premultiply: the round trip is exact for u8 and u16, transparent is black",
          "[premultiply]") {
    for (const int type : {CV_8UC4, CV_16UC4}) {
        cv::Mat image(31, 17, type);
        cv::randu(image, 0, type == CV_8UC4 ? 256 : 65536);
        const Depth depth = type == CV_8UC4 ? Depth::u8 : Depth::u16;
        const cv::Mat back = unpremultiplied(premultiplied(image), depth, depth_max(depth));
        REQUIRE(back.type() == type);
        for (int y = 0; y < image.rows; ++y) {
            for (int x = 0; x < image.cols; ++x) {
                for (int c = 0; c < 4; ++c) {
                    const double in = type == CV_8UC4 ? image.at<cv::Vec4b>(y, x)[c]
                                                      : image.at<cv::Vec4w>(y, x)[c];
                    const double alpha = type == CV_8UC4 ? image.at<cv::Vec4b>(y, x)[3]
                                                         : image.at<cv::Vec4w>(y, x)[3];
                    const double out = type == CV_8UC4 ? back.at<cv::Vec4b>(y, x)[c]
                                                       : back.at<cv::Vec4w>(y, x)[c];
                    INFO(y << "," << x << " channel " << c);
                    REQUIRE(out == (c < 3 && alpha == 0 ? 0 : in));
                }
            }
        }
    }
    // Float keeps its own range (1 is full); a u8 input written as u16
    // keeps its samples' meaning, as the filter's own output does.
    cv::Mat f(1, 1, CV_32FC4, cv::Scalar(0.25, 0.5, 2.0, 0.5));
    CHECK(unpremultiplied(premultiplied(f), Depth::f32, 1.0).at<cv::Vec4f>(0, 0) ==
          cv::Vec4f(0.25f, 0.5f, 2.0f, 0.5f));
    cv::Mat u8(1, 1, CV_8UC4, cv::Scalar(10, 20, 30, 128));
    CHECK(unpremultiplied(premultiplied(u8), Depth::u16, 255.0).at<cv::Vec4w>(0, 0) ==
          cv::Vec4w(10, 20, 30, 128));
}

}  // namespace cudaconv
