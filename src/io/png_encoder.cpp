#include "io/png_encoder.hpp"

#include <libdeflate.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>

namespace cudaconv {
namespace {

constexpr std::uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
constexpr std::uint8_t kFilterNone = 0;
constexpr std::uint8_t kFilterUp = 2;

void put_u32(std::vector<std::uint8_t>& out, std::uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<std::uint8_t>(v >> shift));
}

// A chunk: length, type, data, CRC-32 of type and data.
void put_chunk(std::vector<std::uint8_t>& out, const char (&type)[5], const std::uint8_t* data,
               std::size_t size) {
    put_u32(out, static_cast<std::uint32_t>(size));
    const std::size_t type_at = out.size();
    out.insert(out.end(), type, type + 4);
    if (size > 0) out.insert(out.end(), data, data + size);
    const std::uint32_t crc = libdeflate_crc32(0, out.data() + type_at, size + 4);
    put_u32(out, crc);
}

// PNG's colour type for what cudaconv writes: gray, BGR, BGRA. (Gray with
// alpha would be PNG's type 4, which OpenCV reads back as BGRA.)
std::uint8_t colour_type(int channels) {
    switch (channels) {
        case 1: return 0;  // gray
        case 3: return 2;  // RGB
        case 4: return 6;  // RGBA
        default: throw std::invalid_argument("cudaconv writes PNGs of 1, 3 or 4 channels");
    }
}

// One filtered row: PNG's "Up" filter, each byte minus the byte above it,
// straight from the image's rows, or with above == nullptr PNG's "None"
// (the bytes as they are), in PNG's byte order: RGB(A) for BGR(A), 16-bit
// samples big-endian. The filter works on bytes, so a 16-bit sample's high
// and low bytes are differenced apart. The channel count is a template
// parameter, so that the compiler vectorises the loop.
template <typename T, int C>
void filtered_row(const T* row, const T* above, int width, std::uint8_t* out) {
    constexpr int kFrom[4] = {C >= 3 ? 2 : 0, 1, C >= 3 ? 0 : 2, 3};  // BGR(A) -> RGB(A)
    for (int x = 0; x < width; ++x) {
        const T* p = row + static_cast<std::ptrdiff_t>(x) * C;
        const T* q = above ? above + static_cast<std::ptrdiff_t>(x) * C : nullptr;
        for (int c = 0; c < C; ++c) {
            const T v = p[kFrom[c]];
            const T u = q ? q[kFrom[c]] : T{0};
            if constexpr (sizeof(T) == 1) {
                *out++ = static_cast<std::uint8_t>(v - u);
            } else {
                *out++ = static_cast<std::uint8_t>((v >> 8) - (u >> 8));
                *out++ = static_cast<std::uint8_t>((v & 0xFF) - (u & 0xFF));
            }
        }
    }
}

template <typename T>
void filtered_row(const T* row, const T* above, int width, int channels, std::uint8_t* out) {
    switch (channels) {
        case 1: return filtered_row<T, 1>(row, above, width, out);
        case 3: return filtered_row<T, 3>(row, above, width, out);
        default: return filtered_row<T, 4>(row, above, width, out);
    }
}

// Row y of the image after filter (None or Up), its filter byte first.
void filter_row(const cv::Mat& image, int y, std::uint8_t filter, std::uint8_t* out) {
    out[0] = filter;
    const bool up = filter == kFilterUp && y > 0;
    if (image.depth() == CV_8U) {
        filtered_row(image.ptr<std::uint8_t>(y), up ? image.ptr<std::uint8_t>(y - 1) : nullptr,
                     image.cols, image.channels(), out + 1);
    } else {
        filtered_row(image.ptr<std::uint16_t>(y), up ? image.ptr<std::uint16_t>(y - 1) : nullptr,
                     image.cols, image.channels(), out + 1);
    }
}

// One filter for the whole image, None or Up, whichever compresses a
// sample of it smaller: kSampleStrips strips of kStripRows rows spread
// down the image, through the same compressor. Photos favour Up (a
// 4000x3000 photo at level 1: 6.2 MB and 152 ms to deflate, against 10.7 MB
// and 187 ms with None); filtered images such as an edge map, mostly dark
// with sparse noise, favour None (8.5 MB and 168 ms, against 9.9 MB and 220
// ms with Up), and the smaller stream is also the faster one to make. The
// sample costs about 2% of the encoding. libpng's per-row heuristic (the
// least sum of absolute values) picked worse than either on edge maps.
constexpr int kSampleStrips = 8;
constexpr int kStripRows = 4;

template <typename Compressor>
std::uint8_t choose_filter(const cv::Mat& image, std::size_t row_bytes, Compressor* compressor) {
    const int strips = std::min(kSampleStrips, std::max(1, image.rows / kStripRows));
    const int rows = std::min(kStripRows, image.rows);
    std::vector<std::uint8_t> sample((row_bytes + 1) * static_cast<std::size_t>(strips * rows));
    std::vector<std::uint8_t> out;
    std::size_t best_size = 0;
    std::uint8_t best = kFilterUp;
    for (std::uint8_t filter : {kFilterUp, kFilterNone}) {
        std::uint8_t* at = sample.data();
        for (int s = 0; s < strips; ++s) {
            const int first = static_cast<int>(static_cast<long long>(image.rows - rows) * s /
                                               std::max(1, strips - 1));
            for (int y = first; y < first + rows; ++y, at += row_bytes + 1) {
                filter_row(image, y, filter, at);
            }
        }
        out.resize(libdeflate_zlib_compress_bound(compressor, sample.size()));
        const std::size_t size =
            libdeflate_zlib_compress(compressor, sample.data(), sample.size(), out.data(), out.size());
        if (best_size == 0 || (size != 0 && size < best_size)) {
            best_size = size;
            best = filter;
        }
    }
    return best;
}

struct CompressorDeleter {
    void operator()(libdeflate_compressor* c) const { libdeflate_free_compressor(c); }
};

}  // namespace

std::vector<std::uint8_t> encode_png(const cv::Mat& image, int level,
                                     std::size_t max_idat_bytes) {
    if (image.empty()) throw std::invalid_argument("PNG cannot hold an empty image");
    if (max_idat_bytes == 0 || max_idat_bytes > kMaxIdatBytes) max_idat_bytes = kMaxIdatBytes;
    const int depth = image.depth();
    if (depth != CV_8U && depth != CV_16U) {
        throw std::invalid_argument("PNG holds 8- or 16-bit samples");
    }
    const int channels = image.channels();
    const std::uint8_t type = colour_type(channels);
    const int width = image.cols;
    const int height = image.rows;
    const std::size_t sample_bytes = depth == CV_8U ? 1 : 2;
    const std::size_t row_bytes = static_cast<std::size_t>(width) * channels * sample_bytes;

    std::unique_ptr<libdeflate_compressor, CompressorDeleter> compressor(
        libdeflate_alloc_compressor(std::clamp(level, 0, 9)));
    if (!compressor) throw std::bad_alloc();

    // The filtered rows, each after its filter byte: what IDAT compresses.
    const std::uint8_t filter = choose_filter(image, row_bytes, compressor.get());
    std::vector<std::uint8_t> rows((row_bytes + 1) * static_cast<std::size_t>(height));
    for (int y = 0; y < height; ++y) {
        filter_row(image, y, filter, rows.data() + static_cast<std::size_t>(y) * (row_bytes + 1));
    }

    std::uint8_t header[13] = {};
    for (int i = 0; i < 4; ++i) {
        header[i] = static_cast<std::uint8_t>(static_cast<std::uint32_t>(width) >> (24 - 8 * i));
        header[4 + i] =
            static_cast<std::uint8_t>(static_cast<std::uint32_t>(height) >> (24 - 8 * i));
    }
    header[8] = static_cast<std::uint8_t>(sample_bytes * 8);  // bit depth
    header[9] = type;
    // header[10..12]: deflate compression, adaptive filtering, no interlace

    std::vector<std::uint8_t> png;
    png.insert(png.end(), std::begin(kSignature), std::end(kSignature));
    put_chunk(png, "IHDR", header, sizeof header);

    // The zlib stream goes straight into the file's buffer, after room for
    // the first IDAT's length and type; no second copy of it is made.
    const std::size_t stream_at = png.size() + 8;
    png.resize(stream_at + libdeflate_zlib_compress_bound(compressor.get(), rows.size()));
    const std::size_t stream_size = libdeflate_zlib_compress(
        compressor.get(), rows.data(), rows.size(), png.data() + stream_at, png.size() - stream_at);
    if (stream_size == 0) throw std::runtime_error("libdeflate could not compress the rows");
    rows = {};

    if (stream_size <= max_idat_bytes) {
        // One IDAT around the stream where it lies.
        std::uint8_t* frame = png.data() + stream_at - 8;
        for (int i = 0; i < 4; ++i) {
            frame[i] = static_cast<std::uint8_t>(stream_size >> (24 - 8 * i));
        }
        std::memcpy(frame + 4, "IDAT", 4);
        const std::uint32_t crc = libdeflate_crc32(0, frame + 4, stream_size + 4);
        png.resize(stream_at + stream_size);
        put_u32(png, crc);
    } else {
        // Past max_idat_bytes: consecutive IDATs, which readers join.
        const std::vector<std::uint8_t> stream(
            png.begin() + static_cast<std::ptrdiff_t>(stream_at),
            png.begin() + static_cast<std::ptrdiff_t>(stream_at + stream_size));
        png.resize(stream_at - 8);
        for (std::size_t at = 0; at < stream_size; at += max_idat_bytes) {
            put_chunk(png, "IDAT", stream.data() + at,
                      std::min(max_idat_bytes, stream_size - at));
        }
    }
    put_chunk(png, "IEND", nullptr, 0);
    png.shrink_to_fit();
    return png;
}

}  // namespace cudaconv
