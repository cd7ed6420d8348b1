#include "support/black_png.hpp"

#include <zlib.h>

#include <algorithm>
#include <stdexcept>

namespace cudaconv::test {
namespace {

void be32(std::string& out, std::uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>(v >> shift);
}

// Raw deflate (no zlib header) of `zeros` zero bytes, ended by `flush`.
std::string raw_deflate(std::size_t zeros, int flush) {
    z_stream s{};
    if (deflateInit2(&s, 9, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        throw std::runtime_error("deflateInit2 failed");
    }
    std::string in(zeros, '\0');
    std::string out(deflateBound(&s, static_cast<uLong>(zeros)) + 64, '\0');
    s.next_in = reinterpret_cast<Bytef*>(in.data());
    s.avail_in = static_cast<uInt>(in.size());
    s.next_out = reinterpret_cast<Bytef*>(out.data());
    s.avail_out = static_cast<uInt>(out.size());
    const int result = deflate(&s, flush);
    out.resize(s.total_out);
    deflateEnd(&s);
    if (result == Z_STREAM_ERROR || s.avail_in != 0) throw std::runtime_error("deflate failed");
    return out;
}

int channels_of(int colour_type) {
    switch (colour_type) {
        case 2: return 3;
        case 4: return 2;
        case 6: return 4;
        default: return 1;
    }
}

}  // namespace

std::string zeros_zlib(std::uint64_t length) {
    constexpr std::size_t kPiece = 1 << 20;
    const std::string piece = raw_deflate(kPiece, Z_SYNC_FLUSH);
    std::string stream = "\x78\xDA";
    stream.reserve(2 + piece.size() * (length / kPiece) + 64);
    for (std::uint64_t i = 0; i < length / kPiece; ++i) stream += piece;
    stream += raw_deflate(static_cast<std::size_t>(length % kPiece), Z_FINISH);
    // Adler-32 of zeros: its low sum stays 1, the high one counts the bytes.
    be32(stream, static_cast<std::uint32_t>((length % 65521) << 16 | 1));
    return stream;
}

std::string png_chunk(const char* type, const std::string& data) {
    std::string chunk;
    be32(chunk, static_cast<std::uint32_t>(data.size()));
    chunk.append(type, 4);
    chunk += data;
    be32(chunk,
         static_cast<std::uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(chunk.data() + 4),
                                          static_cast<uInt>(chunk.size() - 4))));
    return chunk;
}

std::string black_png(std::uint32_t width, std::uint32_t height, int colour_type, int bit_depth,
                      std::uint64_t extra, std::size_t idat_bytes) {
    const std::uint64_t row =
        1 +
        std::uint64_t{width} * static_cast<std::uint64_t>(channels_of(colour_type) * bit_depth / 8);
    std::string header;
    be32(header, width);
    be32(header, height);
    header += {static_cast<char>(bit_depth), static_cast<char>(colour_type), 0, 0, 0};
    std::string png = "\x89PNG\r\n\x1A\n" + png_chunk("IHDR", header);
    const std::string stream = zeros_zlib(row * height + extra);
    const std::size_t step = idat_bytes == 0 ? stream.size() : idat_bytes;
    for (std::size_t at = 0; at < stream.size(); at += step) {
        png += png_chunk("IDAT", stream.substr(at, std::min(step, stream.size() - at)));
    }
    return png + png_chunk("IEND", "");
}

}  // namespace cudaconv::test
