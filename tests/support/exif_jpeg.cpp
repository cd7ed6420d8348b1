#include "support/exif_jpeg.hpp"

#include <string>

#include <opencv2/imgcodecs.hpp>

namespace cudaconv::test {
namespace {

using Bytes = std::vector<std::uint8_t>;

void put16(Bytes& out, unsigned v) {
    out.push_back(static_cast<std::uint8_t>(v));
    out.push_back(static_cast<std::uint8_t>(v >> 8));
}

void put32(Bytes& out, std::size_t v) {
    put16(out, static_cast<unsigned>(v & 0xFFFF));
    put16(out, static_cast<unsigned>(v >> 16));
}

// One little-endian directory entry: its tag, type and count, and its
// value's bytes, in the entry when they fit in 4, else after the directory.
struct Entry {
    unsigned tag;
    unsigned type;  // 1 BYTE, 2 ASCII, 3 SHORT, 4 LONG, 5 RATIONAL
    std::size_t count;
    Bytes value;
};
using Directory = std::vector<Entry>;

Entry ascii(unsigned tag, const std::string& text) {
    Bytes value(text.begin(), text.end());
    value.push_back(0);
    return {tag, 2, value.size(), value};
}

Entry number(unsigned tag, unsigned type, std::size_t v) {
    Bytes value;
    if (type == 3) {
        put16(value, static_cast<unsigned>(v));
    } else {
        put32(value, v);
    }
    return {tag, type, 1, value};
}

// The directory and its values' bytes.
std::size_t size_of(const Directory& directory) {
    std::size_t size = 2 + 12 * directory.size() + 4;
    for (const Entry& e : directory) {
        if (e.value.size() > 4) size += e.value.size() + e.value.size() % 2;
    }
    return size;
}

void put_directory(Bytes& out, const Directory& directory, std::size_t next) {
    std::size_t data = out.size() + 2 + 12 * directory.size() + 4;
    Bytes values;
    put16(out, static_cast<unsigned>(directory.size()));
    for (const Entry& e : directory) {
        put16(out, e.tag);
        put16(out, e.type);
        put32(out, e.count);
        if (e.value.size() <= 4) {
            Bytes field = e.value;
            field.resize(4, 0);
            out.insert(out.end(), field.begin(), field.end());
        } else {
            put32(out, data + values.size());
            values.insert(values.end(), e.value.begin(), e.value.end());
            if (values.size() % 2 != 0) values.push_back(0);
        }
    }
    put32(out, next);
    out.insert(out.end(), values.begin(), values.end());
}

}  // namespace

Bytes camera_exif(int value) {
    const std::string date = "2024:05:06 07:08:09";
    Bytes exposure;  // 1/250
    put32(exposure, 1);
    put32(exposure, 250);
    const Directory exif = {{0x829A, 5, 1, exposure}, ascii(0x9003, date)};
    const Directory gps = {{0x0000, 1, 4, {2, 2, 0, 0}}, ascii(0x0001, "N")};
    const Bytes thumbnail = {0xFF, 0xD8, 0xFF, 0xD9};
    Directory ifd0 = {ascii(0x010F, "cudaconv-cam"),
                      ascii(0x0110, "model-1"),
                      number(0x0112, 3, static_cast<std::size_t>(value)),
                      ascii(0x0132, date),
                      number(0x8769, 4, 0),   // the Exif directory's offset, below
                      number(0x8825, 4, 0)};  // the GPS directory's
    Directory ifd1 = {number(0x0103, 3, 6),   // JPEG compressed
                      number(0x0201, 4, 0),   // the thumbnail's offset, below
                      number(0x0202, 4, thumbnail.size())};
    const std::size_t at_ifd0 = 8;
    const std::size_t at_exif = at_ifd0 + size_of(ifd0);
    const std::size_t at_gps = at_exif + size_of(exif);
    const std::size_t at_ifd1 = at_gps + size_of(gps);
    const std::size_t at_thumbnail = at_ifd1 + size_of(ifd1);
    ifd0[4] = number(0x8769, 4, at_exif);
    ifd0[5] = number(0x8825, 4, at_gps);
    ifd1[1] = number(0x0201, 4, at_thumbnail);
    Bytes tiff = {'I', 'I'};
    put16(tiff, 42);
    put32(tiff, at_ifd0);
    put_directory(tiff, ifd0, at_ifd1);
    put_directory(tiff, exif, 0);
    put_directory(tiff, gps, 0);
    put_directory(tiff, ifd1, 0);
    tiff.insert(tiff.end(), thumbnail.begin(), thumbnail.end());
    return tiff;
}

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
