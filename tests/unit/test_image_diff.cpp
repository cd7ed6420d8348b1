// compare/image_diff: the metrics of `cudaconv compare` on images whose
// answers are known by hand, the limits, and the heat map.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include <opencv2/core.hpp>

#include "compare/image_diff.hpp"

namespace cudaconv {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

TEST_CASE("identical images: zero error, infinite PSNR, no worst pixel", "[compare]") {
    const cv::Mat a(5, 7, CV_8UC3, cv::Scalar(10, 20, 30));
    const ImageDiff d = diff_images(a, a.clone());
    CHECK(d.identical());
    CHECK(d.max_abs == 0.0);
    CHECK(d.rmse == 0.0);
    CHECK(std::isinf(d.psnr));
    CHECK(d.differing_pixels == 0);
    CHECK(d.pixels == 35);
    CHECK(d.worst_x == -1);
    CHECK(limit_violations(d, {}).empty());
}

TEST_CASE("u8 metrics computed by hand, and the worst pixel's place and values", "[compare]") {
    cv::Mat a(4, 5, CV_8UC3, cv::Scalar(100, 100, 100));
    cv::Mat b = a.clone();
    a.at<cv::Vec3b>(1, 2) = cv::Vec3b(100, 103, 100);  // x=2, y=1, channel 1 off by 3
    a.at<cv::Vec3b>(3, 4) = cv::Vec3b(99, 100, 101);   // two channels off by 1
    const ImageDiff d = diff_images(a, b);
    CHECK(d.max_abs == 3.0);
    CHECK(d.worst_x == 2);
    CHECK(d.worst_y == 1);
    CHECK(d.worst_channel == 1);
    CHECK(d.worst_a == std::vector<double>{100, 103, 100});
    CHECK(d.worst_b == std::vector<double>{100, 100, 100});
    const double samples = 4 * 5 * 3;
    CHECK(d.mean_abs == Approx(5.0 / samples));
    CHECK(d.rmse == Approx(std::sqrt(11.0 / samples)));
    CHECK(d.psnr == Approx(20.0 * std::log10(255.0 / std::sqrt(11.0 / samples))));
    CHECK(d.max_rel == Approx(3.0 / 100.0));
    CHECK(d.differing_pixels == 2);
    CHECK(d.differing_share() == Approx(2.0 / 20.0));
    // A pixel threshold of 1 leaves only the pixel that is off by 3.
    CHECK(diff_images(a, b, 1.0).differing_pixels == 1);
}

TEST_CASE("u16 PSNR uses 65535 as its peak, ROIs are read through their stride", "[compare]") {
    cv::Mat big_a(10, 10, CV_16UC1, cv::Scalar(1000));
    cv::Mat big_b(10, 10, CV_16UC1, cv::Scalar(1000));
    big_a.at<std::uint16_t>(5, 5) = 1010;
    const ImageDiff d = diff_images(big_a(cv::Rect(4, 4, 3, 3)), big_b(cv::Rect(4, 4, 3, 3)));
    CHECK(d.max_abs == 10.0);
    CHECK(d.worst_x == 1);
    CHECK(d.worst_y == 1);
    CHECK(d.peak == 65535.0);
    CHECK(d.rmse == Approx(std::sqrt(100.0 / 9.0)));
}

TEST_CASE("float: NaN and infinities, relative error and the PSNR peak", "[compare]") {
    cv::Mat a(1, 4, CV_32FC1);
    cv::Mat b(1, 4, CV_32FC1);
    a.at<float>(0) = 2.0f;
    b.at<float>(0) = 2.5f;
    a.at<float>(1) = static_cast<float>(kNaN);
    b.at<float>(1) = static_cast<float>(kNaN);  // NaN = NaN
    a.at<float>(2) = static_cast<float>(kInf);
    b.at<float>(2) = static_cast<float>(kInf);  // equal infinities
    a.at<float>(3) = -4.0f;
    b.at<float>(3) = -4.0f;
    ImageDiff d = diff_images(a, b);
    CHECK(d.max_abs == 0.5);
    CHECK(d.peak == 4.0);  // the largest finite |B|
    CHECK(d.max_rel == Approx(0.5 / 4.0));
    CHECK(d.differing_pixels == 1);

    b.at<float>(3) = static_cast<float>(kNaN);  // a number against NaN
    d = diff_images(a, b);
    CHECK(std::isinf(d.max_abs));
    CHECK(d.worst_x == 3);
    CHECK(std::isinf(d.rmse));
    CHECK_FALSE(limit_violations(d, {1e9, {}, {}, {}}).empty());
}

TEST_CASE("images of different size, channels or depth cannot be compared", "[compare]") {
    const cv::Mat a(4, 4, CV_8UC3);
    CHECK_THAT(comparability_problem(a, cv::Mat(4, 5, CV_8UC3)),
               Catch::Contains("sizes differ: 4x4 vs 5x4"));
    CHECK_THAT(comparability_problem(a, cv::Mat(4, 4, CV_8UC4)), Catch::Contains("--ignore-alpha"));
    CHECK_THAT(comparability_problem(a, cv::Mat(4, 4, CV_16UC3)),
               Catch::Contains("depths differ: u8 vs u16"));
    CHECK(comparability_problem(a, cv::Mat(4, 4, CV_8UC3)).empty());
    CHECK_THROWS_AS(diff_images(a, cv::Mat(3, 4, CV_8UC3)), std::invalid_argument);
}

TEST_CASE("limits: each one checked only when given, none given means identical", "[compare]") {
    cv::Mat a(10, 10, CV_8UC1, cv::Scalar(50));
    const cv::Mat b = a.clone();
    a.at<std::uint8_t>(0, 0) = 52;  // one pixel of 100 off by 2
    const ImageDiff d = diff_images(a, b);

    CHECK(limit_violations(d, {}) == std::vector<std::string>{"max-abs 2 > 0"});
    CHECK(limit_violations(d, {2.0, {}, {}, {}}).empty());
    CHECK(limit_violations(d, {1.0, {}, {}, {}}) == std::vector<std::string>{"max-abs 2 > 1"});
    CHECK(limit_violations(d, {{}, 0.04, {}, {}}).empty());  // 2/50
    CHECK(limit_violations(d, {{}, 0.039, {}, {}}).size() == 1);
    CHECK(limit_violations(d, {{}, {}, d.psnr - 0.01, {}}).empty());
    CHECK(limit_violations(d, {{}, {}, d.psnr + 0.01, {}}).size() == 1);
    CHECK(limit_violations(d, {{}, {}, {}, DifferingLimit{false, 1}}).empty());
    CHECK(limit_violations(d, {{}, {}, {}, DifferingLimit{false, 0}}) ==
          std::vector<std::string>{"differing 1 pixels > 0"});
    CHECK(limit_violations(d, {{}, {}, {}, DifferingLimit{true, 1.0}}).empty());
    CHECK(limit_violations(d, {{}, {}, {}, DifferingLimit{true, 0.5}}).size() == 1);
    // Several broken at once are all named.
    CHECK(limit_violations(d, {0.0, 0.0, 1000.0, DifferingLimit{false, 0}}).size() == 4);
}

TEST_CASE("the max-differing limit takes a count or a percentage", "[compare]") {
    CHECK_FALSE(parse_differing_limit("120").percent);
    CHECK(parse_differing_limit("120").value == 120.0);
    CHECK(parse_differing_limit("0.5%").percent);
    CHECK(parse_differing_limit("0.5%").value == 0.5);
    for (const char* bad : {"", "%", "-1", "5x", "101%", "nan", "1e400"}) {
        CAPTURE(bad);
        CHECK_THROWS_AS(parse_differing_limit(bad), std::invalid_argument);
    }
}

TEST_CASE("the heat map is black where equal and bright where different", "[compare]") {
    cv::Mat a(3, 3, CV_8UC3, cv::Scalar(7, 7, 7));
    const cv::Mat b = a.clone();
    a.at<cv::Vec3b>(0, 0) = cv::Vec3b(8, 7, 7);    // off by 1
    a.at<cv::Vec3b>(2, 2) = cv::Vec3b(7, 7, 200);  // off by 193
    const cv::Mat heat = diff_heat_map(a, b);
    REQUIRE(heat.type() == CV_8UC3);
    REQUIRE(heat.size() == a.size());
    auto brightness = [&](int y, int x) {
        const cv::Vec3b p = heat.at<cv::Vec3b>(y, x);
        return p[0] + p[1] + p[2];
    };
    CHECK(brightness(1, 1) < 10);                // equal: black
    CHECK(brightness(0, 0) > 60);                // one level still shows
    CHECK(brightness(2, 2) > brightness(0, 0));  // the largest is brightest
}

}  // namespace cudaconv
