#include "support/opencv_reference.hpp"

#include <cmath>
#include <stdexcept>

#include <opencv2/imgproc.hpp>

namespace cudaconv::test {

// BorderMode -> OpenCV border type. `valid` pads with a constant but only
// keeps outputs whose taps all lie inside the image, so the value is unused.
int cv_border(BorderMode mode) {
    switch (mode) {
        case BorderMode::reflect101: return cv::BORDER_REFLECT_101;
        case BorderMode::reflect: return cv::BORDER_REFLECT;
        case BorderMode::replicate: return cv::BORDER_REPLICATE;
        case BorderMode::constant: return cv::BORDER_CONSTANT;
        case BorderMode::wrap: return cv::BORDER_WRAP;
        case BorderMode::valid: return cv::BORDER_CONSTANT;
    }
    throw std::invalid_argument("unknown border mode");
}

int cv_depth(Depth depth) {
    switch (depth) {
        case Depth::u8: return CV_8U;
        case Depth::u16: return CV_16U;
        case Depth::f32: return CV_32F;
    }
    throw std::invalid_argument("unknown depth");
}

int cv_type(Depth depth, int channels) { return CV_MAKETYPE(cv_depth(depth), channels); }

Depth depth_of(const cv::Mat& m) {
    switch (m.depth()) {
        case CV_8U: return Depth::u8;
        case CV_16U: return Depth::u16;
        case CV_32F: return Depth::f32;
        default: throw std::invalid_argument("cv::Mat depth is not u8, u16 or f32");
    }
}

ConstImageView const_view(const cv::Mat& m) {
    return {reinterpret_cast<const std::byte*>(m.data), m.cols, m.rows, m.channels(), depth_of(m),
            static_cast<std::int64_t>(m.step[0])};
}

ImageView mutable_view(cv::Mat& m) {
    return {reinterpret_cast<std::byte*>(m.data), m.cols, m.rows, m.channels(), depth_of(m),
            static_cast<std::int64_t>(m.step[0])};
}

cv::Mat reference_exact(const cv::Mat& src, const ConvParams& params) {
    const Filter& f = params.filter;
    const int ax = params.anchor_x, ay = params.anchor_y;
    CV_Assert(!src.empty() && f.width >= 1 && f.height >= 1);
    CV_Assert(f.taps.size() == static_cast<std::size_t>(f.width) * f.height);
    CV_Assert(ax >= 0 && ax < f.width && ay >= 0 && ay < f.height);
    const int width = src.cols, height = src.rows, channels = src.channels();

    cv::Mat kernel(f.height, f.width, CV_64F);
    for (int j = 0; j < f.height; ++j) {
        for (int i = 0; i < f.width; ++i) kernel.at<double>(j, i) = f.at(i, j);
    }

    // Double throughout: every u8/u16/f32 sample and border value is exact,
    // and the converted Mat is a fresh one, so copyMakeBorder cannot read
    // past a ROI of the caller's image.
    cv::Mat src64;
    src.convertTo(src64, CV_64F);
    const bool valid = params.border == BorderMode::valid;
    const cv::Scalar border_value = cv::Scalar::all(valid ? 0.0 : params.border_value);
    // Padding by the filter's reach: copyMakeBorder repeats reflections as
    // borderInterpolate does, so pads wider than the image are fine.
    cv::Mat padded;
    cv::copyMakeBorder(src64, padded, ay, f.height - 1 - ay, ax, f.width - 1 - ax,
                       cv_border(params.border), border_value);
    // Every output of the interior reads only the padded image, so the
    // border filter2D itself applies never matters.
    cv::Mat filtered;
    cv::filter2D(padded, filtered, CV_64F, kernel, cv::Point(ax, ay), 0.0, cv::BORDER_CONSTANT);
    const cv::Mat full = filtered(cv::Rect(ax, ay, width, height));

    // `valid` keeps the full-size outputs whose taps stay inside the image:
    // output (x, y) is the full result at (x + ax, y + ay).
    const cv::Rect out_rect = valid ? cv::Rect(ax, ay, width - f.width + 1, height - f.height + 1)
                                    : cv::Rect(0, 0, width, height);
    if (out_rect.width <= 0 || out_rect.height <= 0) return {};
    cv::Mat exact = full(out_rect).clone();

    const bool keep_alpha = channels == 4 && params.alpha == AlphaMode::keep;
    for (int y = 0; y < exact.rows; ++y) {
        double* row = exact.ptr<double>(y);
        const double* centre = src64.ptr<double>(y + out_rect.y) + out_rect.x * channels;
        for (int x = 0; x < exact.cols; ++x) {
            for (int c = 0; c < channels; ++c) {
                double& v = row[x * channels + c];
                if (keep_alpha && c == 3) {
                    v = centre[x * channels + c];
                    continue;
                }
                v = params.scale * v + params.delta;
                if (params.take_abs) v = std::abs(v);
            }
        }
    }
    return exact;
}

cv::Mat reference_filter2d(const cv::Mat& src, const ConvParams& params, Depth out_depth) {
    const cv::Mat exact = reference_exact(src, params);
    if (exact.empty()) return {};
    cv::Mat out;
    exact.convertTo(out, cv_depth(out_depth));  // saturate_cast: half to even, saturated
    return out;
}

}  // namespace cudaconv::test
