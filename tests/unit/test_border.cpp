// The border policies of core/border.hpp against OpenCV's borderInterpolate,
// which docs/SPEC.md names as the definition, including coordinates several
// image lengths away (filters larger than the image). Also checks that
// copyMakeBorder, on which the OpenCV reference of the cpu-ref tests rests,
// agrees with borderInterpolate for pads wider than the image.
#include <cstdint>
#include <string>

#include <catch2/catch.hpp>
#include <opencv2/core.hpp>

#include "core/border.hpp"
#include "support/opencv_reference.hpp"

namespace {

using cudaconv::BorderMode;

// The SPEC's lengths of interest: len 1 (every reflection collapses) to 9,
// and p reaching several periods past either edge.
constexpr int kMaxLength = 9;

template <typename Policy>
void check_policy_against_opencv(BorderMode mode) {
    const int cv_mode = cudaconv::test::cv_border(mode);
    for (int len = 1; len <= kMaxLength; ++len) {
        for (int p = -3 * len - 5; p <= 4 * len + 5; ++p) {
            CAPTURE(cudaconv::border_name(mode), len, p);
            const std::int64_t expected = cv::borderInterpolate(p, len, cv_mode);
            REQUIRE(Policy::index(p, len) == expected);
            REQUIRE(cudaconv::border_index(mode, p, len) == expected);
        }
    }
}

}  // namespace

TEST_CASE("reflect101 border matches cv::borderInterpolate", "[border]") {
    check_policy_against_opencv<cudaconv::Reflect101Border>(BorderMode::reflect101);
}

TEST_CASE("reflect border matches cv::borderInterpolate", "[border]") {
    check_policy_against_opencv<cudaconv::ReflectBorder>(BorderMode::reflect);
}

TEST_CASE("replicate border matches cv::borderInterpolate", "[border]") {
    check_policy_against_opencv<cudaconv::ReplicateBorder>(BorderMode::replicate);
}

TEST_CASE("constant border matches cv::borderInterpolate", "[border]") {
    // OpenCV returns -1 outside the image, the same sentinel as kBorderConstant.
    STATIC_REQUIRE(cudaconv::kBorderConstant == -1);
    check_policy_against_opencv<cudaconv::ConstantBorder>(BorderMode::constant);
}

TEST_CASE("wrap border matches cv::borderInterpolate", "[border]") {
    check_policy_against_opencv<cudaconv::WrapBorder>(BorderMode::wrap);
}

TEST_CASE("valid border is the identity inside the image", "[border]") {
    // `valid` shrinks the output instead of reading outside, so only
    // in-range coordinates ever reach it.
    for (int len = 1; len <= kMaxLength; ++len) {
        for (int p = 0; p < len; ++p) {
            CAPTURE(len, p);
            REQUIRE(cudaconv::ValidBorder::index(p, len) == p);
            REQUIRE(cudaconv::border_index(BorderMode::valid, p, len) == p);
        }
    }
}

TEST_CASE("border patterns are those of the SPEC table", "[border]") {
    // The table's `abcdefgh` rows, written out, so a reader can see the
    // policies do what the user documentation promises.
    const std::string image = "abcdefgh";
    const auto pattern = [&](BorderMode mode) {
        std::string out;
        for (int p = -6; p < 15; ++p) {
            if (p == 0 || p == 8) out += '|';
            const std::int64_t i = cudaconv::border_index(mode, p, 8);
            out += i == cudaconv::kBorderConstant ? 'i' : image[static_cast<std::size_t>(i)];
        }
        return out;
    };
    CHECK(pattern(BorderMode::reflect101) == "gfedcb|abcdefgh|gfedcba");
    CHECK(pattern(BorderMode::reflect) == "fedcba|abcdefgh|hgfedcb");
    CHECK(pattern(BorderMode::replicate) == "aaaaaa|abcdefgh|hhhhhhh");
    CHECK(pattern(BorderMode::constant) == "iiiiii|abcdefgh|iiiiiii");
    CHECK(pattern(BorderMode::wrap) == "cdefgh|abcdefgh|abcdefg");
}

TEST_CASE("border policies stay in range for far coordinates", "[border]") {
    // 64-bit coordinates far outside the image (huge filters or images):
    // the closed forms must neither overflow nor leave [0, len).
    const std::int64_t far = std::int64_t{1} << 40;
    for (const BorderMode mode :
         {BorderMode::reflect101, BorderMode::reflect, BorderMode::replicate, BorderMode::wrap}) {
        for (std::int64_t len :
             {std::int64_t{1}, std::int64_t{2}, std::int64_t{7}, std::int64_t{65536}}) {
            for (std::int64_t p : {-far - 3, -far, far, far + 5}) {
                CAPTURE(cudaconv::border_name(mode), len, p);
                const std::int64_t i = cudaconv::border_index(mode, p, len);
                CHECK(i >= 0);
                CHECK(i < len);
            }
        }
    }
    // Wrap and the reflections are periodic, so far values are checkable.
    CHECK(cudaconv::border_index(BorderMode::wrap, far + 5, 7) == (far + 5) % 7);
    CHECK(cudaconv::border_index(BorderMode::reflect101, -far, 7) ==
          cv::borderInterpolate(static_cast<int>(-far % 12), 7, cv::BORDER_REFLECT_101));
    CHECK(cudaconv::border_index(BorderMode::reflect, far + 5, 7) ==
          cv::borderInterpolate(static_cast<int>((far + 5) % 14), 7, cv::BORDER_REFLECT));
}

TEST_CASE("border_index_near: border_index's value where it answers, and it answers near",
          "[border]") {
    for (const BorderMode mode :
         {BorderMode::reflect101, BorderMode::reflect, BorderMode::replicate, BorderMode::constant,
          BorderMode::wrap, BorderMode::valid}) {
        for (std::int64_t len = 1; len <= 50; ++len) {
            for (std::int64_t p = -200; p < 250; ++p) {
                CAPTURE(cudaconv::border_name(mode), len, p);
                const std::int64_t near = cudaconv::border_index_near(mode, p, len);
                if (near != cudaconv::kBorderFar) {
                    CHECK(near == cudaconv::border_index(mode, p, len));
                }
                // Within one length of the image the closed forms hold
                // (reflect101, which skips the edge pixel: one less each side).
                const std::int64_t reach = mode == BorderMode::reflect101 ? len - 1 : len;
                if (mode != BorderMode::valid && p >= -reach && p < len + reach) {
                    CHECK(near != cudaconv::kBorderFar);
                }
            }
        }
    }
}

TEST_CASE("copyMakeBorder matches borderInterpolate for pads wider than the image", "[border]") {
    // The OpenCV reference pads with copyMakeBorder by up to the filter's
    // reach, which may exceed the image several times; check that it follows
    // borderInterpolate there too, so the reference rests on the definition.
    const BorderMode mode = GENERATE(BorderMode::reflect101, BorderMode::reflect,
                                     BorderMode::replicate, BorderMode::constant, BorderMode::wrap);
    const int width = GENERATE(1, 2, 3, 5);
    const int height = GENERATE(1, 2, 4);
    const int cv_mode = cudaconv::test::cv_border(mode);
    constexpr double kValue = -7.5;
    CAPTURE(cudaconv::border_name(mode), width, height);

    cv::Mat src(height, width, CV_64FC2);
    for (int y = 0; y < height; ++y) {
        for (int x = 0; x < width; ++x) src.at<cv::Vec2d>(y, x) = {double(x), double(y)};
    }
    const int top = 3 * height + 2, bottom = 4 * height + 1;
    const int left = 3 * width + 4, right = 4 * width + 3;
    cv::Mat padded;
    cv::copyMakeBorder(src, padded, top, bottom, left, right, cv_mode, cv::Scalar::all(kValue));
    REQUIRE(padded.rows == height + top + bottom);
    REQUIRE(padded.cols == width + left + right);
    for (int y = 0; y < padded.rows; ++y) {
        for (int x = 0; x < padded.cols; ++x) {
            const int sx = cv::borderInterpolate(x - left, width, cv_mode);
            const int sy = cv::borderInterpolate(y - top, height, cv_mode);
            const cv::Vec2d expected = (sx < 0 || sy < 0) ? cv::Vec2d(kValue, kValue)
                                                          : cv::Vec2d(double(sx), double(sy));
            CAPTURE(x - left, y - top);
            REQUIRE(padded.at<cv::Vec2d>(y, x) == expected);
        }
    }
}
