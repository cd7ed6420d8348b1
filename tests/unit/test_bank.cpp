// Banks' combination (core/bank.hpp): each way of combining, the finish
// (scale, delta, |.|, rounding) once on the combination, a kept alpha
// channel copied, and responses unlike the output refused.
#include <catch2/catch.hpp>

#include <cmath>
#include <stdexcept>
#include <vector>

#include <opencv2/core.hpp>

#include "core/bank.hpp"
#include "support/opencv_reference.hpp"

namespace cudaconv::test {

TEST_CASE("bank: magnitude, max and sum, finished once on the combination") {
    // Two responses of one pixel of two channels: (3, -7) and (4, 2).
    cv::Mat a(1, 1, CV_32FC2, cv::Scalar(3.0f, -7.0f));
    cv::Mat b(1, 1, CV_32FC2, cv::Scalar(4.0f, 2.0f));
    const std::vector<ConstImageView> responses{const_view(a), const_view(b)};
    cv::Mat out(1, 1, CV_32FC2);
    combine_responses(responses, Combine::magnitude, 2, 1.0, 0.0, false, mutable_view(out));
    CHECK(out.at<cv::Vec2f>(0, 0)[0] == 5.0f);
    CHECK(out.at<cv::Vec2f>(0, 0)[1] == Approx(std::sqrt(53.0)));
    combine_responses(responses, Combine::max, 2, 1.0, 0.0, false, mutable_view(out));
    CHECK(out.at<cv::Vec2f>(0, 0) == cv::Vec2f(4.0f, 2.0f));
    combine_responses(responses, Combine::sum, 2, 2.0, 1.0, true, mutable_view(out));
    CHECK(out.at<cv::Vec2f>(0, 0) == cv::Vec2f(15.0f, 9.0f));  // |2*(3+4)+1|, |2*(-5)+1|

    // Into u8: rounded half to even and saturated, after the combination.
    cv::Mat u8(1, 1, CV_8UC2);
    combine_responses(responses, Combine::sum, 2, 0.5, 0.0, false, mutable_view(u8));
    CHECK(u8.at<cv::Vec2b>(0, 0) == cv::Vec2b(4, 0));  // 3.5 -> 4, -2.5 -> 0
    combine_responses(responses, Combine::magnitude, 2, 100.0, 0.0, false, mutable_view(u8));
    CHECK(u8.at<cv::Vec2b>(0, 0) == cv::Vec2b(255, 255));
}

TEST_CASE("bank: a kept alpha channel is the first response's, unchanged") {
    cv::Mat a(2, 3, CV_32FC4, cv::Scalar(10.0f, 20.0f, 30.0f, 128.0f));
    cv::Mat b(2, 3, CV_32FC4, cv::Scalar(-10.0f, 0.0f, 40.0f, 7.0f));
    cv::Mat out(2, 3, CV_8UC4);
    combine_responses({const_view(a), const_view(b)}, Combine::sum, 3, 1.0, 5.0, false,
                      mutable_view(out));
    for (int y = 0; y < 2; ++y) {
        for (int x = 0; x < 3; ++x) CHECK(out.at<cv::Vec4b>(y, x) == cv::Vec4b(5, 25, 75, 128));
    }
}

TEST_CASE("bank: stack keeps every response, filter by filter, a kept alpha last") {
    cv::Mat a(1, 2, CV_32FC4, cv::Scalar(1.0f, 2.0f, 3.0f, 200.0f));
    cv::Mat b(1, 2, CV_32FC4, cv::Scalar(-4.0f, 5.0f, 6.5f, 9.0f));
    CHECK(combined_channels(Combine::stack, 2, 4, 3) == 7);
    CHECK(combined_channels(Combine::stack, 2, 4, 4) == 8);
    CHECK(combined_channels(Combine::sum, 2, 4, 3) == 4);
    cv::Mat out(1, 2, CV_32FC(7));
    combine_responses({const_view(a), const_view(b)}, Combine::stack, 3, 2.0, 1.0, true,
                      mutable_view(out));
    const float* p = out.ptr<float>(0);
    const std::vector<float> pixel(p, p + 7);
    CHECK(pixel == std::vector<float>{3, 5, 7, 7, 11, 14, 200});  // |2x + 1|, then the alpha
    CHECK(std::vector<float>(p + 7, p + 14) == pixel);
    cv::Mat wrong(1, 2, CV_32FC4);
    CHECK_THROWS_AS(combine_responses({const_view(a), const_view(b)}, Combine::stack, 3, 1.0, 0.0,
                                      false, mutable_view(wrong)),
                    std::invalid_argument);
}

TEST_CASE("bank: responses unlike the output are refused") {
    cv::Mat a(2, 3, CV_32FC1, cv::Scalar(1.0f));
    cv::Mat small(2, 2, CV_32FC1, cv::Scalar(1.0f));
    cv::Mat u8(2, 3, CV_8UC1, cv::Scalar(1));
    cv::Mat out(2, 3, CV_8UC1);
    CHECK_THROWS_AS(combine_responses({const_view(a), const_view(small)}, Combine::sum, 1, 1.0, 0.0,
                                      false, mutable_view(out)),
                    std::invalid_argument);
    CHECK_THROWS_AS(
        combine_responses({const_view(u8)}, Combine::sum, 1, 1.0, 0.0, false, mutable_view(out)),
        std::invalid_argument);
    CHECK_THROWS_AS(combine_responses({}, Combine::sum, 1, 1.0, 0.0, false, mutable_view(out)),
                    std::invalid_argument);
    CHECK(parse_combine("magnitude") == Combine::magnitude);
    CHECK(parse_combine("stack") == Combine::stack);
    CHECK_FALSE(parse_combine("mean").has_value());
    CHECK(combine_name(Combine::max) == "max");
}

}  // namespace cudaconv::test
