// batch/saturation.hpp: the white or black outputs of a likely mistake are
// named, and pictures that are merely bright, dark or flat are not.
#include <catch2/catch.hpp>

#include <opencv2/core.hpp>

#include "batch/saturation.hpp"
#include "filters/filter.hpp"

namespace cudaconv {
namespace {

ConvParams params_with(std::vector<double> taps, double scale = 1.0, double delta = 0.0) {
    Filter f;
    f.width = static_cast<int>(taps.size());
    f.height = 1;
    f.taps = std::move(taps);
    ConvParams p = centred_params(f);
    p.scale = scale;
    p.delta = delta;
    return p;
}

cv::Mat ramp(int type) {
    cv::Mat m(64, 64, type);
    cv::randu(m, 0, m.depth() == CV_16U ? 65536 : 256);
    return m;
}

}  // namespace

TEST_CASE("saturation: most samples at the top from a gain past 1", "[saturation]") {
    const ConvParams sixteen = params_with({4, 8, 4});
    cv::Mat out(64, 64, CV_8UC3, cv::Scalar(255, 255, 255));
    out.rowRange(0, 20).setTo(cv::Scalar(3, 90, 200));  // 31% below the top
    CHECK(saturation_problem(out, 3, sixteen, Depth::u8) ==
          "69% of the samples saturate at 255: the filter's taps sum to 16 (--normalize divides "
          "the taps by their sum)");
    CHECK_THAT(saturation_problem(out, 3, params_with({1}, 2.5), Depth::u8),
               Catch::Contains("taps sum to 1 and --scale is 2.5"));
    // 16-bit's top, and the share counted in the filtered channels only.
    cv::Mat wide(10, 10, CV_16UC4, cv::Scalar(65535, 65535, 65535, 0));
    CHECK_THAT(saturation_problem(wide, 3, sixteen, Depth::u16),
               Catch::StartsWith("100% of the samples saturate at 65535"));
    // Under half, or a gain of 1 (a white page blurred stays white): silent.
    out.rowRange(0, 40).setTo(cv::Scalar(3, 90, 200));
    CHECK(saturation_problem(out, 3, sixteen, Depth::u8).empty());
    const cv::Mat page(64, 64, CV_8UC1, cv::Scalar(255));
    CHECK(saturation_problem(page, 1, params_with({0.25, 0.5, 0.25}), Depth::u8).empty());
}

TEST_CASE("saturation: a float image in [0, 1] written as integers", "[saturation]") {
    cv::Mat out(32, 32, CV_8UC1, cv::Scalar(0));
    out.colRange(0, 7).setTo(1);
    CHECK_THAT(saturation_problem(out, 1, params_with({1}), Depth::f32),
               Catch::StartsWith("every sample is 0 or 1: a float image in [0, 1]") &&
                   Catch::Contains("--scale 255"));
    // The same samples from an integer input are that input's business.
    CHECK(saturation_problem(out, 1, params_with({1}), Depth::u8).empty());
    out.at<std::uint8_t>(3, 3) = 2;
    CHECK(saturation_problem(out, 1, params_with({1}), Depth::f32).empty());
}

TEST_CASE("saturation: one value everywhere, where the filter changes the level", "[saturation]") {
    const cv::Mat zero(16, 16, CV_16UC1, cv::Scalar(0));
    CHECK(saturation_problem(zero, 1, params_with({1}, 0.001), Depth::u16) ==
          "every sample is 0: the filter's gain is 0.001 (its taps' sum times --scale), plus "
          "--delta 0");
    // A flat picture through a gain-1 filter was flat already.
    CHECK(saturation_problem(zero, 1, params_with({1}), Depth::u16).empty());
}

TEST_CASE("saturation: pictures, float outputs and edge maps pass", "[saturation]") {
    for (const int type : {CV_8UC1, CV_8UC3, CV_16UC3}) {
        CHECK(saturation_problem(ramp(type), type == CV_8UC1 ? 1 : 3, params_with({4, 8, 4}),
                                 Depth::u8)
                  .empty());
    }
    const cv::Mat f(8, 8, CV_32FC1, cv::Scalar(1e9));
    CHECK(saturation_problem(f, 1, params_with({4, 8, 4}), Depth::f32).empty());
    // An edge map: mostly 0, a few edges; its gain is 0.
    cv::Mat edges(64, 64, CV_8UC1, cv::Scalar(0));
    edges.col(30).setTo(255);
    CHECK(saturation_problem(edges, 1, params_with({-1, 2, -1}), Depth::u8).empty());
    CHECK(saturation_problem(cv::Mat(), 1, params_with({1}), Depth::u8).empty());
}

}  // namespace cudaconv
