#include "io/decode_limits.hpp"

#include <algorithm>
#include <limits>

#include "io/memory_check.hpp"

namespace cudaconv {
namespace {

constexpr std::uint64_t kMost = std::numeric_limits<std::uint64_t>::max();

std::uint64_t saturating_product(std::uint64_t a, std::uint64_t b) {
    return a != 0 && b > kMost / a ? kMost : a * b;
}

std::uint64_t saturating_sum(std::uint64_t a, std::uint64_t b) {
    return b > kMost - a ? kMost : a + b;
}

std::string size_text(const ImageShape& shape) {
    return std::to_string(shape.width) + "x" + std::to_string(shape.height);
}

// "RGBA", "16-bit gray", "float RGB"; "image" when the header does not say.
std::string layout_text(const ImageShape& shape) {
    if (shape.channels == 0) return "image";
    std::string words = shape.channels == 1   ? "gray"
                        : shape.channels == 3 ? "RGB"
                        : shape.channels == 4 ? "RGBA"
                                              : std::to_string(shape.channels) + "-channel";
    if (shape.sample_bytes == 2) return "16-bit " + words;
    if (shape.sample_bytes == 4) return "float " + words;
    return words;
}

std::uint64_t bytes_needed(const ImageShape& shape, const ReadOptions& options, bool decoded) {
    const std::uint64_t beside = options.bytes_beside ? options.bytes_beside(shape) : 0;
    return saturating_sum(decoded ? 0 : shape.bytes(), beside);
}

}  // namespace

std::uint64_t ImageShape::pixels() const {
    if (width <= 0 || height <= 0) return 0;
    return saturating_product(static_cast<std::uint64_t>(width),
                              static_cast<std::uint64_t>(height));
}

std::uint64_t ImageShape::bytes() const {
    return saturating_product(pixels(), static_cast<std::uint64_t>(std::max(pixel_bytes, 0)));
}

ImageShape shape_of(const cv::Mat& image) {
    const int sample_bytes = static_cast<int>(image.elemSize1());
    return {image.cols, image.rows, image.channels(), sample_bytes,
            image.channels() * sample_bytes};
}

void check_shape(const ImageShape& shape, const std::string& name, const ReadOptions& options,
                 bool decoded) {
    if (options.max_pixels != 0 && shape.pixels() > options.max_pixels) {
        throw WorkError(name + ": " + size_text(shape) + " pixels is more than --max-pixels " +
                        std::to_string(options.max_pixels) + " (raise it, or 0 for no limit)");
    }
    const std::string shortfall =
        memory_shortfall(bytes_needed(shape, options, decoded), read_memory_figures());
    if (!shortfall.empty()) {
        throw WorkError(name + ": " + size_text(shape) + " " + layout_text(shape) + " " +
                        shortfall);
    }
}

WorkError out_of_memory(const std::string& name, const ImageShape& shape,
                        const ReadOptions& options) {
    std::string message = name + ": out of memory: " + size_text(shape) + " " + layout_text(shape) +
                          " needs about " + approximate_bytes(bytes_needed(shape, options, false));
    if (const auto available = available_memory(read_memory_figures())) {
        message += ", " + approximate_bytes(*available) + " available";
    }
    return WorkError(message);
}

bool is_out_of_memory(const cv::Exception& e) { return e.code == cv::Error::StsNoMem; }

}  // namespace cudaconv
