// The image size in the headers of the formats that format_probe.cpp does
// not otherwise read, as OpenCV 4.6's decoders read them (grfmt_*.cpp), so
// that --max-pixels and the memory check come before any decoding. A header
// that cannot be read leaves the size untold (0): OpenCV's decoder then
// says what is wrong, and the checks follow the decode.
#include "io/probe_sizes.hpp"

#include <cstring>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "io/npy.hpp"

namespace cudaconv::detail {
namespace {

constexpr std::int64_t kMostPlausibleSide = std::int64_t{1} << 31;

class Reader {
public:
    Reader(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

    std::size_t size() const { return size_; }
    bool has(std::size_t at, std::size_t bytes) const { return at <= size_ && bytes <= size_ - at; }
    std::uint8_t byte(std::size_t at) const { return data_[at]; }
    std::uint32_t le16(std::size_t at) const {
        return data_[at] | std::uint32_t{data_[at + 1]} << 8;
    }
    std::uint32_t le24(std::size_t at) const {
        return le16(at) | std::uint32_t{data_[at + 2]} << 16;
    }
    std::uint32_t le32(std::size_t at) const { return le16(at) | le16(at + 2) << 16; }
    std::uint32_t be32(std::size_t at) const {
        return std::uint32_t{data_[at]} << 24 | std::uint32_t{data_[at + 1]} << 16 |
               std::uint32_t{data_[at + 2]} << 8 | data_[at + 3];
    }
    std::string_view text(std::size_t at, std::size_t bytes) const {
        return {reinterpret_cast<const char*>(data_ + at), bytes};
    }

private:
    const std::uint8_t* data_;
    std::size_t size_;
};

void set_size(FormatProbe& probe, std::int64_t width, std::int64_t height, int pixel_bytes) {
    if (width <= 0 || height <= 0 || width > kMostPlausibleSide || height > kMostPlausibleSide) {
        return;
    }
    probe.width = width;
    probe.height = height;
    probe.pixel_bytes = pixel_bytes;
}

// BITMAPINFOHEADER and its successors (40+ bytes; OpenCV takes 36 and up)
// or the old BITMAPCOREHEADER (12). A negative height is a top-down image.
// OpenCV gives 8-bit BGRA for 32 bits a pixel, else BGR or gray.
void bmp_size(const Reader& r, FormatProbe& probe) {
    if (!r.has(14, 16)) return;
    const std::uint32_t header = r.le32(14);
    if (header >= 36) {
        const auto height = static_cast<std::int32_t>(r.le32(22));
        const int bits = static_cast<int>(r.le16(28));
        set_size(probe, static_cast<std::int32_t>(r.le32(18)),
                 height < 0 ? -std::int64_t{height} : height, bits == 32 ? 4 : 3);
    } else if (header == 12) {
        set_size(probe, r.le16(18), r.le16(20), r.le16(24) == 32 ? 4 : 3);
    }
}

// Netpbm's numbers: decimal, separated by whitespace and '#' comments.
class PnmNumbers {
public:
    PnmNumbers(const Reader& r, std::size_t at) : r_(r), at_(at) {}

    std::optional<std::int64_t> next() {
        for (;;) {
            if (at_ >= r_.size()) return std::nullopt;
            const char c = static_cast<char>(r_.byte(at_));
            if (c == '#') {
                while (at_ < r_.size() && r_.byte(at_) != '\n') ++at_;
            } else if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
                ++at_;
            } else {
                break;
            }
        }
        std::int64_t value = 0;
        int digits = 0;
        for (; at_ < r_.size() && r_.byte(at_) >= '0' && r_.byte(at_) <= '9'; ++at_, ++digits) {
            if (digits == 12) return std::nullopt;  // past any plausible size
            value = value * 10 + (r_.byte(at_) - '0');
        }
        if (digits == 0) return std::nullopt;
        return value;
    }

private:
    const Reader& r_;
    std::size_t at_;
};

// P7: "WIDTH w", "HEIGHT h", "DEPTH d", "MAXVAL m" lines up to "ENDHDR".
void pam_size(const Reader& r, FormatProbe& probe) {
    std::int64_t width = 0, height = 0, depth = 4, largest = 65535;
    std::size_t at = 2;
    while (at < r.size()) {
        std::size_t end = at;
        while (end < r.size() && r.byte(end) != '\n') ++end;
        const std::string_view line = r.text(at, end - at);
        if (line.substr(0, 6) == "ENDHDR") break;
        for (auto [key, value] : {std::pair<std::string_view, std::int64_t*>{"WIDTH", &width},
                                  {"HEIGHT", &height},
                                  {"DEPTH", &depth},
                                  {"MAXVAL", &largest}}) {
            if (line.substr(0, key.size()) != key) continue;
            PnmNumbers number(r, at + key.size());
            if (const auto n = number.next()) *value = *n;
        }
        at = end + 1;
    }
    const int channels = depth >= 1 && depth <= 4 ? static_cast<int>(depth) : 4;
    set_size(probe, width, height, channels * (largest > 255 ? 2 : 1));
}

// P1..P6: width, height, then (but for bitmaps) the largest sample value;
// P1, P2, P4, P5 are gray, P3 and P6 colour; over 255, 16-bit samples.
void pnm_size(const Reader& r, FormatProbe& probe) {
    const char kind = static_cast<char>(r.byte(1));
    if (kind == '7') {
        pam_size(r, probe);
        return;
    }
    PnmNumbers numbers(r, 2);
    const std::optional<std::int64_t> width = numbers.next(), height = numbers.next();
    if (!width || !height) return;
    const bool bitmap = kind == '1' || kind == '4';
    const std::optional<std::int64_t> largest = bitmap ? std::optional<std::int64_t>{1}
                                                       : numbers.next();
    const int channels = kind == '3' || kind == '6' ? 3 : 1;
    set_size(probe, *width, *height, channels * (largest.value_or(65535) > 255 ? 2 : 1));
}

// "PF" (colour) or "Pf" (gray), width, height: 32-bit float samples.
void pfm_size(const Reader& r, FormatProbe& probe) {
    PnmNumbers numbers(r, 2);
    const std::optional<std::int64_t> width = numbers.next(), height = numbers.next();
    if (width && height) set_size(probe, *width, *height, r.byte(1) == 'F' ? 12 : 4);
}

// NumPy's header (io/npy.hpp): (H, W) or (H, W, C) float32 samples, the
// size and pixel bytes told as for PFM. A header the reader refuses tells
// no size; decoding says why.
void npy_size(const std::uint8_t* data, std::size_t size, FormatProbe& probe) {
    try {
        const NpyHeader header = read_npy_header(data, size);
        const std::int64_t channels = header.shape.size() == 3 ? header.shape[2] : 1;
        if (channels > 4) return;  // not an image cudaconv filters: decoding says so
        set_size(probe, header.shape[1], header.shape[0], static_cast<int>(4 * channels));
    } catch (const std::invalid_argument&) {
    }
}

// RIFF, then the first chunk: VP8 (lossy: a frame tag, a start code and
// 14-bit sizes), VP8L (lossless: 14-bit sizes less one) or VP8X (extended:
// 24-bit canvas sizes less one). OpenCV gives BGR or BGRA.
void webp_size(const Reader& r, FormatProbe& probe) {
    if (!r.has(12, 18)) return;
    const std::string_view chunk = r.text(12, 4);
    if (chunk == "VP8 " && r.byte(23) == 0x9D && r.byte(24) == 0x01 && r.byte(25) == 0x2A) {
        set_size(probe, r.le16(26) & 0x3FFF, r.le16(28) & 0x3FFF, 4);
    } else if (chunk == "VP8L" && r.byte(20) == 0x2F) {
        const std::uint32_t bits = r.le32(21);
        set_size(probe, (bits & 0x3FFF) + 1, (bits >> 14 & 0x3FFF) + 1, 4);
    } else if (chunk == "VP8X") {
        set_size(probe, r.le24(24) + 1, r.le24(27) + 1, 4);  // bytes 24 to 29
    }
}

// Eight big-endian words: magic, width, height, bits a pixel, ...
void sun_raster_size(const Reader& r, FormatProbe& probe) {
    if (r.has(0, 16)) set_size(probe, r.be32(4), r.be32(8), 4);
}

// Text lines up to an empty one, then the resolution: "-Y 512 +X 768"
// (rows first, the usual order) or "+X 768 -Y 512". Float RGB.
void hdr_size(const Reader& r, FormatProbe& probe) {
    std::size_t at = 0;
    bool header_ended = false;
    while (at < r.size()) {
        std::size_t end = at;
        while (end < r.size() && r.byte(end) != '\n') ++end;
        if (header_ended) {
            const std::string_view line = r.text(at, end - at);
            if (line.size() < 2 || (line[0] != '-' && line[0] != '+')) return;
            const bool rows_first = line[1] == 'Y';
            PnmNumbers numbers(r, at + 2);
            const std::optional<std::int64_t> first = numbers.next();
            const std::size_t second_axis = line.find(rows_first ? 'X' : 'Y', 2);
            if (!first || second_axis == std::string_view::npos) return;
            PnmNumbers rest(r, at + second_axis + 1);
            const std::optional<std::int64_t> second = rest.next();
            if (!second) return;
            set_size(probe, rows_first ? *second : *first, rows_first ? *first : *second, 12);
            return;
        }
        header_ended = end == at;
        at = end + 1;
    }
}

// The header's attributes (name, type, size, value) up to an empty name;
// the size is the data window's (a box2i: x and y min, x and y max).
// OpenCV gives up to 4 channels of 32-bit float.
void exr_size(const Reader& r, FormatProbe& probe) {
    std::size_t at = 8;
    const auto string_at = [&r](std::size_t from) -> std::optional<std::string_view> {
        std::size_t end = from;
        while (end < r.size() && r.byte(end) != 0) ++end;
        if (end >= r.size()) return std::nullopt;
        return r.text(from, end - from);
    };
    for (;;) {
        const std::optional<std::string_view> name = string_at(at);
        if (!name || name->empty()) return;
        const std::optional<std::string_view> type = string_at(at + name->size() + 1);
        if (!type) return;
        const std::size_t size_at = at + name->size() + type->size() + 2;
        if (!r.has(size_at, 4)) return;
        const std::uint32_t size = r.le32(size_at);
        const std::size_t value_at = size_at + 4;
        if (!r.has(value_at, size)) return;
        if (*name == "dataWindow" && *type == "box2i" && size == 16) {
            const auto coordinate = [&r, value_at](int i) {
                return std::int64_t{static_cast<std::int32_t>(r.le32(value_at + 4 * i))};
            };
            set_size(probe, coordinate(2) - coordinate(0) + 1, coordinate(3) - coordinate(1) + 1,
                     16);
            return;
        }
        at = value_at + size;
    }
}

int jpeg2000_pixel_bytes(std::uint32_t components, std::uint32_t precision) {
    const std::uint32_t channels = components >= 1 && components <= 4 ? components : 4;
    return static_cast<int>(channels) * (precision > 8 ? 2 : 1);
}

// A bare codestream: SOC, then SIZ with the reference grid's size and the
// image's offset in it, the component count and each one's precision.
void jpeg2000_codestream_size(const Reader& r, std::size_t at, FormatProbe& probe) {
    if (!r.has(at, 43) || r.be32(at) != 0xFF4FFF51) return;
    const std::int64_t width = std::int64_t{r.be32(at + 8)} - r.be32(at + 16);
    const std::int64_t height = std::int64_t{r.be32(at + 12)} - r.be32(at + 20);
    const std::uint32_t components = r.byte(at + 40) << 8 | r.byte(at + 41);
    set_size(probe, width, height, jpeg2000_pixel_bytes(components, (r.byte(at + 42) & 0x7F) + 1u));
}

// JP2: boxes (a 32-bit length, with 1 meaning a 64-bit one follows and 0
// "to the end", then the type); the header box holds the image header box.
void jp2_size(const Reader& r, std::size_t from, std::size_t to, FormatProbe& probe) {
    std::size_t at = from;
    while (r.has(at, 8) && at + 8 <= to) {
        std::uint64_t length = r.be32(at);
        std::size_t header = 8;
        if (length == 1) {
            if (!r.has(at, 16)) return;
            length = std::uint64_t{r.be32(at + 8)} << 32 | r.be32(at + 12);
            header = 16;
        } else if (length == 0) {
            length = to - at;
        }
        if (length < header || length > to - at) return;
        const std::string_view type = r.text(at + 4, 4);
        if (type == "jp2h") return jp2_size(r, at + header, at + length, probe);
        if (type == "ihdr" && r.has(at + header, 11)) {
            const std::size_t box = at + header;
            set_size(probe, r.be32(box + 4), r.be32(box),
                     jpeg2000_pixel_bytes(r.byte(box + 8) << 8 | r.byte(box + 9),
                                          (r.byte(box + 10) & 0x7F) + 1u));
            return;
        }
        at += length;
    }
}

}  // namespace

void read_header_size(const std::uint8_t* data, std::size_t size, FormatProbe& probe) {
    const Reader r(data, size);
    switch (probe.format) {
        case ImageFormat::bmp: bmp_size(r, probe); break;
        case ImageFormat::pnm: pnm_size(r, probe); break;
        case ImageFormat::pfm: pfm_size(r, probe); break;
        case ImageFormat::webp: webp_size(r, probe); break;
        case ImageFormat::sun_raster: sun_raster_size(r, probe); break;
        case ImageFormat::npy: npy_size(data, size, probe); break;
        case ImageFormat::hdr: hdr_size(r, probe); break;
        case ImageFormat::exr: exr_size(r, probe); break;
        case ImageFormat::jpeg2000:
            if (r.has(0, 4) && r.be32(0) == 0xFF4FFF51) {
                jpeg2000_codestream_size(r, 0, probe);
            } else {
                jp2_size(r, 0, r.size(), probe);
            }
            break;
        default: break;
    }
}

}  // namespace cudaconv::detail
