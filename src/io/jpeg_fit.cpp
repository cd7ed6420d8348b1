#include "io/jpeg_fit.hpp"

#include <cmath>

#include <fmt/format.h>

#include "base/errors.hpp"
#include "base/printable.hpp"

namespace cudaconv {

std::string JpegFit::what(const std::string& background) const {
    std::string text;
    if (flattens_alpha) text = "alpha flattened onto " + background;
    if (scales_16_bit) text += std::string(text.empty() ? "" : ", ") + "16-bit samples scaled to 8";
    return text;
}

JpegFit jpeg_fit(int channels, Depth depth) { return {channels == 4, depth == Depth::u16}; }

namespace {

template <typename Sample>
cv::Mat flattened(const cv::Mat& image, const Rgb8& background, double max) {
    cv::Mat out(image.rows, image.cols, CV_8UC3);
    // The background in the image's scale, in OpenCV's BGR order.
    const double bg[3] = {background[2] * max / 255.0, background[1] * max / 255.0,
                          background[0] * max / 255.0};
    const double to_8_bits = 255.0 / max;
    for (int y = 0; y < image.rows; ++y) {
        const Sample* in = image.ptr<Sample>(y);
        std::uint8_t* o = out.ptr<std::uint8_t>(y);
        for (int x = 0; x < image.cols; ++x, in += 4, o += 3) {
            const double a = in[3];
            for (int c = 0; c < 3; ++c) {
                const double v = (in[c] * a + bg[c] * (max - a)) / max * to_8_bits;
                o[c] = cv::saturate_cast<std::uint8_t>(v);
            }
        }
    }
    return out;
}

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

}  // namespace

cv::Mat fit_for_jpeg(const cv::Mat& image, const Rgb8& background) {
    // Float stays as it is, for the format check to refuse.
    if (image.depth() != CV_8U && image.depth() != CV_16U) return image;
    const JpegFit fit =
        jpeg_fit(image.channels(), image.depth() == CV_16U ? Depth::u16 : Depth::u8);
    if (!fit.converts()) return image;
    if (fit.flattens_alpha) {
        return image.depth() == CV_16U ? flattened<std::uint16_t>(image, background, 65535.0)
                                       : flattened<std::uint8_t>(image, background, 255.0);
    }
    cv::Mat out;
    image.convertTo(out, CV_8U, 1.0 / 257.0);
    return out;
}

Rgb8 parse_background(const std::string& text) {
    std::string lower;
    for (const char c : text) lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    if (lower == "white") return kWhite;
    if (lower == "black") return {0, 0, 0};
    if (lower.size() == 7 && lower[0] == '#') {
        Rgb8 rgb{};
        bool ok = true;
        for (int i = 0; i < 3; ++i) {
            const int hi = hex_digit(lower[1 + 2 * i]), lo = hex_digit(lower[2 + 2 * i]);
            ok = ok && hi >= 0 && lo >= 0;
            rgb[i] = static_cast<std::uint8_t>(hi * 16 + lo);
        }
        if (ok) return rgb;
    }
    throw UsageError(fmt::format("--background \"{}\": not a colour (white, black or #RRGGBB)",
                                 printable(text)));
}

}  // namespace cudaconv
