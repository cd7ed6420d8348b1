#include "io/exif_orientation.hpp"

#include <cstring>

namespace cudaconv {

namespace {

constexpr std::uint16_t kOrientationTag = 0x0112;
constexpr std::uint16_t kShortType = 3;

// The TIFF structure inside the EXIF payload, either byte order.
class Tiff {
public:
    Tiff(const std::uint8_t* data, std::size_t size, bool big_endian)
        : data_(data), size_(size), big_endian_(big_endian) {}

    bool has(std::size_t at, std::size_t bytes) const { return at <= size_ && bytes <= size_ - at; }
    std::uint32_t u16(std::size_t at) const {
        const std::uint32_t a = data_[at], b = data_[at + 1];
        return big_endian_ ? (a << 8 | b) : (b << 8 | a);
    }
    std::uint32_t u32(std::size_t at) const {
        const std::uint32_t hi = big_endian_ ? u16(at) : u16(at + 2);
        const std::uint32_t lo = big_endian_ ? u16(at + 2) : u16(at);
        return hi << 16 | lo;
    }

private:
    const std::uint8_t* data_;
    std::size_t size_;
    bool big_endian_;
};

}  // namespace

std::size_t tiff_orientation_at(const std::uint8_t* tiff_data, std::size_t tiff_size) {
    constexpr std::size_t kNone = static_cast<std::size_t>(-1);
    if (tiff_size < 8) return kNone;
    bool big_endian = false;
    if (std::memcmp(tiff_data, "MM", 2) == 0) {
        big_endian = true;
    } else if (std::memcmp(tiff_data, "II", 2) != 0) {
        return kNone;
    }
    const Tiff tiff(tiff_data, tiff_size, big_endian);
    if (tiff.u16(2) != 42) return kNone;
    const std::size_t directory = tiff.u32(4);
    if (!tiff.has(directory, 2)) return kNone;
    const std::size_t entries = tiff.u16(directory);
    for (std::size_t i = 0; i < entries; ++i) {
        const std::size_t entry = directory + 2 + 12 * i;
        if (!tiff.has(entry, 12)) return kNone;
        if (tiff.u16(entry) != kOrientationTag) continue;
        if (tiff.u16(entry + 2) != kShortType || tiff.u32(entry + 4) != 1) return kNone;
        return entry + 8;  // a SHORT sits first in the value field
    }
    return kNone;
}

int exif_orientation(const std::uint8_t* data, std::size_t size) {
    constexpr std::size_t kExifHeader = 6;  // "Exif\0\0"
    if (size < kExifHeader + 8 || std::memcmp(data, "Exif\0\0", kExifHeader) != 0) {
        return kUpright;
    }
    const std::uint8_t* tiff = data + kExifHeader;
    const std::size_t at = tiff_orientation_at(tiff, size - kExifHeader);
    if (at == static_cast<std::size_t>(-1)) return kUpright;
    const std::uint32_t value = Tiff(tiff, size - kExifHeader, tiff[0] == 'M').u16(at);
    return value >= 1 && value <= 8 ? static_cast<int>(value) : kUpright;
}

}  // namespace cudaconv
