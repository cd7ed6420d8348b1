#include "support/exif_jpeg.hpp"

#include <opencv2/imgcodecs.hpp>

namespace cudaconv::test {

std::vector<std::uint8_t> exif_segment(int value, bool big_endian) {
    std::vector<std::uint8_t> tiff;
    const auto u16 = [&](unsigned v) {
        if (big_endian) {
            tiff.push_back(static_cast<std::uint8_t>(v >> 8));
            tiff.push_back(static_cast<std::uint8_t>(v));
        } else {
            tiff.push_back(static_cast<std::uint8_t>(v));
            tiff.push_back(static_cast<std::uint8_t>(v >> 8));
        }
    };
    const auto u32 = [&](unsigned v) {
        if (big_endian) {
            u16(v >> 16);
            u16(v & 0xFFFF);
        } else {
            u16(v & 0xFFFF);
            u16(v >> 16);
        }
    };
    tiff.push_back(big_endian ? 'M' : 'I');
    tiff.push_back(big_endian ? 'M' : 'I');
    u16(42);
    u32(8);       // the first directory, right after the header
    u16(2);       // two entries: another tag first, then the orientation
    u16(0x010F);  // Make, ASCII, 4 bytes in the field: "cam\0"
    u16(2);
    u32(4);
    tiff.insert(tiff.end(), {'c', 'a', 'm', 0});
    u16(0x0112);  // Orientation, SHORT, 1 value, in the field's first 2 bytes
    u16(3);
    u32(1);
    u16(static_cast<unsigned>(value));
    u16(0);
    u32(0);  // no next directory
    std::vector<std::uint8_t> segment{0xFF, 0xE1};
    const std::size_t length = 2 + 6 + tiff.size();
    segment.push_back(static_cast<std::uint8_t>(length >> 8));
    segment.push_back(static_cast<std::uint8_t>(length));
    segment.insert(segment.end(), {'E', 'x', 'i', 'f', 0, 0});
    segment.insert(segment.end(), tiff.begin(), tiff.end());
    return segment;
}

std::vector<std::uint8_t> jpeg_with_segment(const cv::Mat& image,
                                            const std::vector<std::uint8_t>& segment) {
    std::vector<std::uint8_t> jpeg;
    cv::imencode(".jpg", image, jpeg, {cv::IMWRITE_JPEG_QUALITY, 100});
    jpeg.insert(jpeg.begin() + 2, segment.begin(), segment.end());
    return jpeg;
}

}  // namespace cudaconv::test
