#include "io/metadata.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>

#include <libdeflate.h>

#include "io/exif_orientation.hpp"
#include "io/png_chunks.hpp"
#include "io/tiff_metadata.hpp"

namespace cudaconv {

namespace {

constexpr char kExifHeader[] = "Exif\0";  // 6 bytes with its NUL
constexpr std::size_t kExifHeaderBytes = 6;
constexpr char kIccHeader[] = "ICC_PROFILE";  // then NUL, sequence, count
constexpr std::size_t kIccHeaderBytes = 14;
constexpr std::size_t kMaxSegmentPayload = 65533;  // a JPEG segment's length field, less itself
constexpr std::size_t kMaxIccBytes = 64u << 20;    // past any real profile
constexpr std::uint8_t kPngSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};

std::uint32_t be32(const std::uint8_t* p) {
    return std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 | p[3];
}

// The JPEG's segments before its first scan: EXIF from the first APP1 that
// is one, ICC from the APP2 chunks, ordered by their sequence numbers and
// kept only when all `count` of them are there.
ImageMetadata read_jpeg(const std::uint8_t* data, std::size_t size) {
    ImageMetadata m;
    std::map<int, std::vector<std::uint8_t>> icc_chunks;
    int icc_count = 0;
    std::size_t pos = 2;
    while (pos + 4 <= size && data[pos] == 0xFF) {
        const std::uint8_t marker = data[pos + 1];
        if (marker == 0xDA || marker == 0xD9) break;  // the scan, or the end
        if (marker == 0xFF) {                         // a fill byte
            ++pos;
            continue;
        }
        const std::size_t length = std::size_t{data[pos + 2]} << 8 | data[pos + 3];
        if (length < 2 || pos + 2 + length > size) break;
        const std::uint8_t* payload = data + pos + 4;
        const std::size_t bytes = length - 2;
        if (marker == 0xE1 && m.exif.empty() && bytes > kExifHeaderBytes &&
            std::memcmp(payload, kExifHeader, kExifHeaderBytes) == 0) {
            m.exif.assign(payload + kExifHeaderBytes, payload + bytes);
        } else if (marker == 0xE2 && bytes > kIccHeaderBytes &&
                   std::memcmp(payload, kIccHeader, sizeof kIccHeader) == 0) {
            const int sequence = payload[12];
            const int count = payload[13];
            if (sequence >= 1 && sequence <= count && (icc_count == 0 || icc_count == count)) {
                icc_count = count;
                icc_chunks[sequence].assign(payload + kIccHeaderBytes, payload + bytes);
            }
        }
        pos += 2 + length;
    }
    if (icc_count > 0 && static_cast<int>(icc_chunks.size()) == icc_count) {
        for (const auto& [sequence, chunk] : icc_chunks) {
            m.icc.insert(m.icc.end(), chunk.begin(), chunk.end());
        }
    }
    return m;
}

// iCCP: a name, NUL, method 0, then the profile as a zlib stream.
std::vector<std::uint8_t> inflated_icc(const std::uint8_t* data, std::size_t size) {
    const auto* nul =
        static_cast<const std::uint8_t*>(std::memchr(data, 0, std::min<std::size_t>(size, 80)));
    if (nul == nullptr || static_cast<std::size_t>(nul - data) + 2 > size || nul[1] != 0) return {};
    const std::uint8_t* stream = nul + 2;
    const std::size_t stream_size = size - static_cast<std::size_t>(stream - data);
    std::unique_ptr<libdeflate_decompressor, void (*)(libdeflate_decompressor*)> d(
        libdeflate_alloc_decompressor(), libdeflate_free_decompressor);
    if (!d) return {};
    // A profile's size is its first 4 bytes; grow the buffer to it.
    std::vector<std::uint8_t> out(std::max<std::size_t>(stream_size * 4, 4096));
    for (;;) {
        std::size_t got = 0;
        const libdeflate_result r =
            libdeflate_zlib_decompress(d.get(), stream, stream_size, out.data(), out.size(), &got);
        if (r == LIBDEFLATE_SUCCESS) {
            out.resize(got);
            return out;
        }
        if (r != LIBDEFLATE_INSUFFICIENT_SPACE || out.size() >= kMaxIccBytes) return {};
        out.resize(std::min(out.size() * 4, kMaxIccBytes));
    }
}

ImageMetadata read_png(const std::uint8_t* data, std::size_t size) {
    ImageMetadata m;
    std::size_t pos = sizeof kPngSignature;
    while (pos + 12 <= size) {
        const std::size_t length = be32(data + pos);
        if (length > size - pos - 12) break;
        const std::uint8_t* type = data + pos + 4;
        const std::uint8_t* chunk = data + pos + 8;
        if (std::memcmp(type, "IDAT", 4) == 0 || std::memcmp(type, "IEND", 4) == 0) break;
        if (std::memcmp(type, "eXIf", 4) == 0 && m.exif.empty()) {
            m.exif.assign(chunk, chunk + length);
        } else if (std::memcmp(type, "iCCP", 4) == 0 && m.icc.empty()) {
            m.icc = inflated_icc(chunk, length);
        }
        pos += 12 + length;
    }
    return m;
}

void put_segment(std::vector<std::uint8_t>& out, std::uint8_t marker, const std::uint8_t* head,
                 std::size_t head_size, const std::uint8_t* data, std::size_t size) {
    const std::size_t length = 2 + head_size + size;
    out.insert(out.end(), {0xFF, marker, static_cast<std::uint8_t>(length >> 8),
                           static_cast<std::uint8_t>(length & 0xFF)});
    out.insert(out.end(), head, head + head_size);
    out.insert(out.end(), data, data + size);
}

std::vector<std::uint8_t> jpeg_with(std::vector<std::uint8_t> file, const ImageMetadata& m) {
    if (file.size() < 4 || file[0] != 0xFF || file[1] != 0xD8) return file;
    std::vector<std::uint8_t> segments;
    if (!m.exif.empty() && kExifHeaderBytes + m.exif.size() <= kMaxSegmentPayload) {
        put_segment(segments, 0xE1, reinterpret_cast<const std::uint8_t*>(kExifHeader),
                    kExifHeaderBytes, m.exif.data(), m.exif.size());
    }
    constexpr std::size_t kIccChunk = kMaxSegmentPayload - kIccHeaderBytes;
    const std::size_t chunks = (m.icc.size() + kIccChunk - 1) / kIccChunk;
    for (std::size_t i = 0; i < chunks && chunks <= 255; ++i) {
        std::uint8_t head[kIccHeaderBytes];
        std::memcpy(head, kIccHeader, sizeof kIccHeader);
        head[12] = static_cast<std::uint8_t>(i + 1);
        head[13] = static_cast<std::uint8_t>(chunks);
        const std::size_t at = i * kIccChunk;
        put_segment(segments, 0xE2, head, sizeof head, m.icc.data() + at,
                    std::min(kIccChunk, m.icc.size() - at));
    }
    // After SOI, and after a JFIF APP0 there, which readers expect first.
    std::size_t at = 2;
    if (file.size() >= 6 && file[2] == 0xFF && file[3] == 0xE0) {
        at = std::min(file.size(), 4 + (std::size_t{file[4]} << 8 | file[5]));
    }
    file.insert(file.begin() + static_cast<long>(at), segments.begin(), segments.end());
    return file;
}

std::vector<std::uint8_t> png_with(std::vector<std::uint8_t> file, const ImageMetadata& m) {
    constexpr std::size_t kAfterIhdr = 8 + 12 + 13;
    if (file.size() < kAfterIhdr || std::memcmp(file.data(), kPngSignature, 8) != 0 ||
        std::memcmp(file.data() + 12, "IHDR", 4) != 0) {
        return file;
    }
    std::vector<std::uint8_t> chunks;
    if (!m.icc.empty()) {
        std::unique_ptr<libdeflate_compressor, void (*)(libdeflate_compressor*)> c(
            libdeflate_alloc_compressor(9), libdeflate_free_compressor);
        if (c) {
            std::vector<std::uint8_t> body = {'I', 'C', 'C', ' ', 'P', 'r', 'o',
                                              'f', 'i', 'l', 'e', 0,   0};
            const std::size_t head = body.size();
            body.resize(head + libdeflate_zlib_compress_bound(c.get(), m.icc.size()));
            const std::size_t n = libdeflate_zlib_compress(c.get(), m.icc.data(), m.icc.size(),
                                                           body.data() + head, body.size() - head);
            if (n > 0) {
                body.resize(head + n);
                put_png_chunk(chunks, "iCCP", body.data(), body.size());
            }
        }
    }
    if (!m.exif.empty()) put_png_chunk(chunks, "eXIf", m.exif.data(), m.exif.size());
    file.insert(file.begin() + static_cast<long>(kAfterIhdr), chunks.begin(), chunks.end());
    return file;
}

}  // namespace

ImageMetadata read_metadata(const std::uint8_t* data, std::size_t size) {
    if (size >= 4 && data[0] == 0xFF && data[1] == 0xD8 && data[2] == 0xFF) {
        return read_jpeg(data, size);
    }
    if (size >= 8 && std::memcmp(data, kPngSignature, 8) == 0) return read_png(data, size);
    return {};
}

void mark_upright(ImageMetadata& metadata) {
    std::vector<std::uint8_t>& tiff = metadata.exif;
    const std::size_t at = tiff_orientation_at(tiff.data(), tiff.size());
    if (at == static_cast<std::size_t>(-1)) return;
    const bool big_endian = tiff[0] == 'M';
    tiff[at] = big_endian ? 0 : 1;
    tiff[at + 1] = big_endian ? 1 : 0;
}

std::vector<std::uint8_t> with_metadata(std::vector<std::uint8_t> file,
                                        const std::string& extension,
                                        const ImageMetadata& metadata) {
    if (metadata.empty()) return file;
    if (extension == ".jpg" || extension == ".jpeg" || extension == ".jpe") {
        return jpeg_with(std::move(file), metadata);
    }
    if (extension == ".png") return png_with(std::move(file), metadata);
    if (is_tiff_extension(extension)) return tiff_with_metadata(std::move(file), metadata);
    return file;
}

}  // namespace cudaconv
