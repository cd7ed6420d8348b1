// Signatures as OpenCV's decoders check them (modules/imgcodecs/src/grfmt_*),
// plus a walk over the structure of the two formats whose truncation OpenCV
// does not report reliably, and a read of a TIFF's first directory; the
// other formats' sizes in probe_sizes.cpp.
#include "io/format_probe.hpp"

#include <algorithm>
#include <cstring>
#include <string_view>
#include <vector>

#include "io/exif_orientation.hpp"
#include "io/plausibility.hpp"
#include "io/probe_sizes.hpp"

namespace cudaconv::detail {
namespace {

struct Bytes {
    const std::uint8_t* data;
    std::size_t size;

    bool starts_with(std::string_view magic) const {
        return size >= magic.size() && std::memcmp(data, magic.data(), magic.size()) == 0;
    }
    std::uint32_t be16(std::size_t at) const {
        return static_cast<std::uint32_t>(data[at]) << 8 | data[at + 1];
    }
    std::uint32_t be32(std::size_t at) const { return be16(at) << 16 | be16(at + 2); }
};

ImageFormat sniff(const Bytes& b) {
    using namespace std::string_view_literals;
    if (b.starts_with("\xFF\xD8\xFF"sv)) return ImageFormat::jpeg;
    if (b.starts_with("\x89PNG\r\n\x1A\n"sv)) return ImageFormat::png;
    if (b.starts_with("II*\0"sv) || b.starts_with("MM\0*"sv) || b.starts_with("II+\0"sv) ||
        b.starts_with("MM\0+"sv)) {
        return ImageFormat::tiff;
    }
    if (b.starts_with("RIFF"sv) && b.size >= 12 && std::memcmp(b.data + 8, "WEBP", 4) == 0) {
        return ImageFormat::webp;
    }
    if (b.starts_with("BM"sv)) return ImageFormat::bmp;
    if (b.size >= 2 && b.data[0] == 'P') {
        if (b.data[1] >= '1' && b.data[1] <= '7') return ImageFormat::pnm;
        if (b.data[1] == 'F' || b.data[1] == 'f') return ImageFormat::pfm;
    }
    if (b.starts_with("\x76\x2F\x31\x01"sv)) return ImageFormat::exr;
    if (b.starts_with("#?RADIANCE"sv) || b.starts_with("#?RGBE"sv)) return ImageFormat::hdr;
    if (b.starts_with("\0\0\0\x0CjP  \r\n\x87\n"sv) || b.starts_with("\xFF\x4F\xFF\x51"sv)) {
        return ImageFormat::jpeg2000;
    }
    if (b.starts_with("\x59\xA6\x6A\x95"sv)) return ImageFormat::sun_raster;
    if (b.starts_with("\x93NUMPY"sv)) return ImageFormat::npy;
    return ImageFormat::unknown;
}

bool is_start_of_frame(std::uint8_t marker) {
    // SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC).
    return marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
}

bool is_standalone_marker(std::uint8_t marker) {
    return marker == 0x01 || marker == 0xD8 || (marker >= 0xD0 && marker <= 0xD7);
}

JpegCoding jpeg_coding(std::uint8_t start_of_frame) {
    if (start_of_frame == 0xC0 || start_of_frame == 0xC1) return JpegCoding::sequential_huffman;
    if (start_of_frame == 0xC2) return JpegCoding::progressive_huffman;
    return JpegCoding::other;
}

std::string size_text(const FormatProbe& probe) {
    return std::to_string(probe.width) + "x" + std::to_string(probe.height);
}

// The first frame header's coding and sampling, and where the frame's data
// starts: what the scans must at least take.
struct JpegFrame {
    JpegCoding coding = JpegCoding::other;
    std::vector<JpegSampling> components;
    std::size_t data_start = 0;
};

// Scans far too short for the frame's size: the file lost most of its data
// (or its header lies), whatever its end marker says.
void check_jpeg_scans(const JpegFrame& frame, std::size_t scan_bytes, FormatProbe& probe) {
    if (probe.width <= 0 || probe.height <= 0) return;
    const std::uint64_t least = least_jpeg_scan_bytes(static_cast<std::uint64_t>(probe.width),
                                                      static_cast<std::uint64_t>(probe.height),
                                                      frame.components, frame.coding);
    if (scan_bytes >= least) return;
    probe.problem = "truncated JPEG: its " + std::to_string(scan_bytes) +
                    " bytes of scan data cannot hold " + size_text(probe) + " pixels (at least " +
                    std::to_string(least) + " bytes)";
}

// Follows the segments from SOI to EOI, skipping each by its length and each
// scan's entropy-coded data up to the next real marker. A file that ends
// first is truncated, whatever its last bytes are (an EXIF thumbnail carries
// its own EOI, so "ends with FF D9" alone is not proof).
void walk_jpeg(const Bytes& b, FormatProbe& probe) {
    const auto truncated = [&probe] {
        probe.problem = "truncated JPEG: the data stops before the end-of-image marker";
    };
    JpegFrame frame;
    bool exif_seen = false;
    std::size_t pos = 2;
    for (;;) {
        // Stray bytes between segments are skipped, as libjpeg does.
        while (pos < b.size && b.data[pos] != 0xFF) ++pos;
        while (pos < b.size && b.data[pos] == 0xFF) ++pos;  // fill bytes
        if (pos >= b.size) return truncated();
        const std::uint8_t marker = b.data[pos++];
        if (marker == 0xD9) {  // EOI: complete
            if (frame.data_start != 0) check_jpeg_scans(frame, pos - 2 - frame.data_start, probe);
            return;
        }
        if (marker == 0x00 || is_standalone_marker(marker)) continue;
        if (pos + 2 > b.size) return truncated();
        const std::size_t length = b.be16(pos);
        if (length < 2) {
            probe.problem = "corrupt JPEG: a segment has an impossible length";
            return;
        }
        if (pos + length > b.size) return truncated();
        // APP1: the first EXIF block before the frame is the image's.
        if (marker == 0xE1 && frame.data_start == 0 && !exif_seen) {
            const std::uint8_t* payload = b.data + pos + 2;
            exif_seen = length - 2 >= 6 && std::memcmp(payload, "Exif\0\0", 6) == 0;
            if (exif_seen) probe.orientation = exif_orientation(payload, length - 2);
        }
        if (is_start_of_frame(marker) && length >= 8 && frame.data_start == 0) {
            probe.height = b.be16(pos + 3);
            probe.width = b.be16(pos + 5);
            // libjpeg gives 8-bit samples; OpenCV turns CMYK into BGR.
            const int precision = b.data[pos + 2];
            const int components = b.data[pos + 7];
            const bool known = precision == 8 &&
                               (components == 1 || components == 3 || components == 4);
            probe.channels = known ? (components == 1 ? 1 : 3) : 0;
            probe.sample_bytes = known ? 1 : 0;
            probe.pixel_bytes = known ? probe.channels : 3;
            frame.coding = jpeg_coding(marker);
            for (std::size_t i = 0; i < std::size_t(components) && 9 + 3 * i < length; ++i) {
                const std::uint8_t factors = b.data[pos + 9 + 3 * i];
                frame.components.push_back({factors >> 4, factors & 0x0F});
            }
            frame.data_start = pos + length;
        }
        pos += length;
        if (marker != 0xDA) continue;
        // SOS: entropy-coded data, in which FF is followed by 00 (a stuffed
        // byte) or by a restart marker; anything else ends the scan.
        for (;;) {
            const void* ff = pos < b.size ? std::memchr(b.data + pos, 0xFF, b.size - pos) : nullptr;
            if (ff == nullptr) return truncated();
            pos = static_cast<std::size_t>(static_cast<const std::uint8_t*>(ff) - b.data);
            if (pos + 1 >= b.size) return truncated();
            const std::uint8_t next = b.data[pos + 1];
            if (next == 0xFF) {
                ++pos;
            } else if (next == 0x00 || (next >= 0xD0 && next <= 0xD7)) {
                pos += 2;
            } else {
                break;  // a marker: the outer loop reads it
            }
        }
    }
}

// As OpenCV's PNG decoder chooses (grfmt_png.cpp, readHeader): gray stays
// one channel, colour and palette become BGR, anything with alpha BGRA;
// 16-bit stays 16-bit, fewer bits become 8.
void png_decoded_type(int bit_depth, int colour_type, FormatProbe& probe) {
    const bool known_depth = bit_depth == 1 || bit_depth == 2 || bit_depth == 4 || bit_depth == 8 ||
                             bit_depth == 16;
    int channels = 0;
    switch (colour_type) {
        case 0: channels = 1; break;  // gray
        case 2:
        case 3: channels = 3; break;  // RGB, palette
        case 4:
        case 6: channels = 4; break;  // gray + alpha, RGBA
        default: break;
    }
    // Unknown: the most, 16-bit BGRA.
    probe.pixel_bytes = 8;
    if (!known_depth || channels == 0) return;
    probe.channels = channels;
    probe.sample_bytes = bit_depth == 16 ? 2 : 1;
    probe.pixel_bytes = channels * probe.sample_bytes;
}

// The bits of a pixel as stored in the file's rows, by colour type.
int png_stored_bits(int bit_depth, int colour_type) {
    switch (colour_type) {
        case 2: return 3 * bit_depth;  // RGB
        case 4: return 2 * bit_depth;  // gray + alpha
        case 6: return 4 * bit_depth;  // RGBA
        default: return bit_depth;     // gray, palette
    }
}

// Chunk by chunk to IEND; libpng checks the CRCs itself. The IDAT chunks'
// bytes against the least the image's rows compress into.
void walk_png(const Bytes& b, FormatProbe& probe) {
    constexpr std::uint32_t kMaxChunkLength = 0x7FFFFFFF;  // the PNG spec's limit
    std::uint64_t image_data_bytes = 0;
    int stored_bits = 0;
    bool interlaced = false;
    std::size_t pos = 8;
    for (;;) {
        if (pos + 8 > b.size) break;
        const std::uint32_t length = b.be32(pos);
        if (length > kMaxChunkLength) {
            probe.problem = "corrupt PNG: a chunk has an impossible length";
            return;
        }
        if (b.size - pos - 8 < std::size_t{length} + 4) break;
        const char* type = reinterpret_cast<const char*>(b.data + pos + 4);
        if (std::memcmp(type, "IHDR", 4) == 0 && length >= 10) {
            probe.width = b.be32(pos + 8);
            probe.height = b.be32(pos + 12);
            png_decoded_type(b.data[pos + 16], b.data[pos + 17], probe);
            stored_bits = png_stored_bits(b.data[pos + 16], b.data[pos + 17]);
            interlaced = b.data[pos + 20] != 0;
        }
        // Transparency for a colour or palette image: OpenCV adds alpha.
        if (std::memcmp(type, "tRNS", 4) == 0 && probe.channels == 3) {
            probe.channels = 4;
            probe.pixel_bytes = 4 * probe.sample_bytes;
        }
        if (std::memcmp(type, "IDAT", 4) == 0) image_data_bytes += length;
        if (std::memcmp(type, "IEND", 4) == 0) {
            const std::uint64_t least = least_png_idat_bytes(
                static_cast<std::uint64_t>(probe.width), static_cast<std::uint64_t>(probe.height),
                stored_bits, interlaced);
            if (image_data_bytes < least) {
                probe.problem = "truncated PNG: its " + std::to_string(image_data_bytes) +
                                " bytes of image data cannot hold " + size_text(probe) +
                                " pixels (at least " + std::to_string(least) + " bytes)";
            }
            return;
        }
        pos += std::size_t{length} + 12;
    }
    probe.problem = "truncated PNG: the data stops before the IEND chunk";
}

// The first image directory of a classic TIFF: its channels and sample type.
// Anything unexpected leaves the decision to OpenCV.
class TiffReader {
public:
    explicit TiffReader(const Bytes& b) : b_(b), little_(b.data[0] == 'I') {}

    void read(FormatProbe& probe) const {
        if (b_.size < 8 || u16(2) != 42) return;  // BigTIFF (43): OpenCV decides
        const std::size_t ifd = u32(4);
        if (ifd + 2 > b_.size) return;
        const std::size_t entries = u16(ifd);
        std::uint32_t channels = 1, bits = 1, sample_format = 1;  // the TIFF defaults
        std::uint32_t photometric = 0;
        bool whole = true;  // false: the directory ends past the file's end
        for (std::size_t i = 0; i < entries; ++i) {
            const std::size_t entry = ifd + 2 + 12 * i;
            if (entry + 12 > b_.size) {
                whole = false;
                break;
            }
            const std::uint32_t tag = u16(entry);
            if (tag == 256) probe.width = first_value(entry);
            if (tag == 257) probe.height = first_value(entry);
            if (tag == 258) bits = first_value(entry);
            if (tag == 262) photometric = first_value(entry);
            if (tag == 277) channels = first_value(entry);
            if (tag == 339) sample_format = first_value(entry);
        }
        if (whole) probe.problem = tiff_problem(channels, bits, sample_format);
        // Up to 4 channels (OpenCV reads some layouts through libtiff's RGBA
        // interface) of the samples' size; LogLuv's become float. No decoder
        // makes samples wider than 64 bits, whatever a forged header says.
        const bool log_luv = photometric == 32844 || photometric == 32845;
        const std::uint32_t sample_bits = std::clamp<std::uint32_t>(bits, 1, 64);
        probe.pixel_bytes = 4 * (log_luv ? 4 : static_cast<int>((sample_bits + 7) / 8));
    }

private:
    std::uint32_t u16(std::size_t at) const {
        return little_ ? (static_cast<std::uint32_t>(b_.data[at + 1]) << 8 | b_.data[at])
                       : b_.be16(at);
    }
    std::uint32_t u32(std::size_t at) const {
        return little_ ? (u16(at + 2) << 16 | u16(at)) : b_.be32(at);
    }
    // The first of an entry's values: SHORT (3) or LONG (4), inline when
    // they fit in 4 bytes, else at the offset stored there.
    std::uint32_t first_value(std::size_t entry) const {
        const std::uint32_t type = u16(entry + 2);
        const std::uint32_t count = u32(entry + 4);
        const std::size_t width = type == 3 ? 2 : 4;
        std::size_t at = entry + 8;
        if (count * width > 4) {
            at = u32(entry + 8);
            if (at + width > b_.size) return 0;
        }
        return type == 3 ? u16(at) : u32(at);
    }

    static std::string tiff_problem(std::uint32_t channels, std::uint32_t bits,
                                    std::uint32_t sample_format) {
        if (channels == 2 || channels > 4) {
            return "unsupported channel count " + std::to_string(channels) +
                   " (cudaconv reads 1, 3 or 4 channels)";
        }
        std::string type;
        if (sample_format == 2) type = std::to_string(bits) + "-bit signed integer";
        if (sample_format == 1 && bits > 16) type = std::to_string(bits) + "-bit unsigned integer";
        if (sample_format == 3 && bits != 32) type = std::to_string(bits) + "-bit float";
        if (type.empty()) return {};
        return "unsupported sample type " + type +
               " (cudaconv reads 8- and 16-bit unsigned integers and 32-bit floats)";
    }

    const Bytes& b_;
    bool little_;
};

}  // namespace

ImageFormat sniff_format(const std::uint8_t* data, std::size_t size) {
    return sniff(Bytes{data, size});
}

FormatProbe probe_image(const std::uint8_t* data, std::size_t size) {
    const Bytes bytes{data, size};
    FormatProbe probe;
    probe.format = sniff(bytes);
    switch (probe.format) {
        case ImageFormat::jpeg: walk_jpeg(bytes, probe); break;
        case ImageFormat::png: walk_png(bytes, probe); break;
        case ImageFormat::tiff: TiffReader(bytes).read(probe); break;
        default: read_header_size(data, size, probe); break;
    }
    return probe;
}

const char* format_name(ImageFormat format) {
    switch (format) {
        case ImageFormat::jpeg: return "JPEG";
        case ImageFormat::png: return "PNG";
        case ImageFormat::tiff: return "TIFF";
        case ImageFormat::webp: return "WebP";
        case ImageFormat::bmp: return "BMP";
        case ImageFormat::pnm: return "PNM";
        case ImageFormat::pfm: return "PFM";
        case ImageFormat::exr: return "OpenEXR";
        case ImageFormat::hdr: return "Radiance HDR";
        case ImageFormat::jpeg2000: return "JPEG 2000";
        case ImageFormat::sun_raster: return "Sun raster";
        case ImageFormat::npy: return "NPY";
        case ImageFormat::unknown: break;
    }
    return "image";
}

bool decodes_from_file_only(ImageFormat format) {
    return format == ImageFormat::exr || format == ImageFormat::hdr || format == ImageFormat::pfm;
}

}  // namespace cudaconv::detail
