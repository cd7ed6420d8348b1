#include "batch/premultiply.hpp"

#include <stdexcept>

namespace cudaconv {

namespace {

template <typename Sample>
void premultiply_rows(const cv::Mat& in, cv::Mat& out, float max) {
    for (int y = 0; y < in.rows; ++y) {
        const Sample* s = in.ptr<Sample>(y);
        float* d = out.ptr<float>(y);
        for (int x = 0; x < in.cols; ++x, s += 4, d += 4) {
            const float a = static_cast<float>(s[3]);
            const float weight = a / max;
            d[0] = static_cast<float>(s[0]) * weight;
            d[1] = static_cast<float>(s[1]) * weight;
            d[2] = static_cast<float>(s[2]) * weight;
            d[3] = a;
        }
    }
}

template <typename Sample>
void unpremultiply_rows(const cv::Mat& in, cv::Mat& out, float max) {
    for (int y = 0; y < in.rows; ++y) {
        const float* s = in.ptr<float>(y);
        Sample* d = out.ptr<Sample>(y);
        for (int x = 0; x < in.cols; ++x, s += 4, d += 4) {
            const float a = s[3];
            const float scale = a > 0.0f ? max / a : 0.0f;
            d[0] = cv::saturate_cast<Sample>(s[0] * scale);
            d[1] = cv::saturate_cast<Sample>(s[1] * scale);
            d[2] = cv::saturate_cast<Sample>(s[2] * scale);
            d[3] = cv::saturate_cast<Sample>(a);
        }
    }
}

}  // namespace

double depth_max(Depth depth) {
    switch (depth) {
        case Depth::u8: return 255.0;
        case Depth::u16: return 65535.0;
        case Depth::f32: return 1.0;
    }
    return 1.0;
}

cv::Mat premultiplied(const cv::Mat& bgra) {
    if (bgra.channels() != 4) throw std::invalid_argument("premultiplied: not 4 channels");
    cv::Mat out(bgra.rows, bgra.cols, CV_32FC4);
    switch (bgra.depth()) {
        case CV_8U: premultiply_rows<std::uint8_t>(bgra, out, 255.0f); break;
        case CV_16U: premultiply_rows<std::uint16_t>(bgra, out, 65535.0f); break;
        case CV_32F: premultiply_rows<float>(bgra, out, 1.0f); break;
        default: throw std::invalid_argument("premultiplied: u8, u16 or f32 samples only");
    }
    return out;
}

cv::Mat unpremultiplied(const cv::Mat& filtered, Depth depth, double input_max) {
    if (filtered.type() != CV_32FC4) throw std::invalid_argument("unpremultiplied: not f32 BGRA");
    const float max = static_cast<float>(input_max);
    cv::Mat out(filtered.rows, filtered.cols,
                depth == Depth::u8    ? CV_8UC4
                : depth == Depth::u16 ? CV_16UC4
                                      : CV_32FC4);
    switch (depth) {
        case Depth::u8: unpremultiply_rows<std::uint8_t>(filtered, out, max); break;
        case Depth::u16: unpremultiply_rows<std::uint16_t>(filtered, out, max); break;
        case Depth::f32: unpremultiply_rows<float>(filtered, out, max); break;
    }
    return out;
}

}  // namespace cudaconv
