#include "io/png_encoder.hpp"
#include "io/png_chunks.hpp"

#include <libdeflate.h>
#include <opencv2/core/utility.hpp>

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>

#include "core/wide_lanes.hpp"
#include "io/run_deflate.hpp"

namespace cudaconv {
namespace {

constexpr std::uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
constexpr std::uint8_t kFilterNone = 0;
constexpr std::uint8_t kFilterUp = 2;

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
template <typename T, int C, bool kUp>
void filtered_row(const T* row, const T* above, int width, std::uint8_t* out) {
    constexpr int kFrom[4] = {C >= 3 ? 2 : 0, 1, C >= 3 ? 0 : 2, 3};  // BGR(A) -> RGB(A)
    for (int x = 0; x < width; ++x) {
        const T* p = row + static_cast<std::ptrdiff_t>(x) * C;
        const T* q = kUp ? above + static_cast<std::ptrdiff_t>(x) * C : nullptr;
        for (int c = 0; c < C; ++c) {
            const T v = p[kFrom[c]];
            const T u = kUp ? q[kFrom[c]] : T{0};
            if constexpr (sizeof(T) == 1) {
                *out++ = static_cast<std::uint8_t>(v - u);
            } else {
                *out++ = static_cast<std::uint8_t>((v >> 8) - (u >> 8));
                *out++ = static_cast<std::uint8_t>((v & 0xFF) - (u & 0xFF));
            }
        }
    }
}

// None and Up are separate loops (kUp), so that neither tests for the
// other inside: with the test, None took 60% as long as compressing.
template <typename T>
void filtered_row(const T* row, const T* above, int width, int channels, std::uint8_t* out) {
    const bool up = above != nullptr;
    switch (channels) {
        case 1:
            return up ? filtered_row<T, 1, true>(row, above, width, out)
                      : filtered_row<T, 1, false>(row, above, width, out);
        case 3:
            return up ? filtered_row<T, 3, true>(row, above, width, out)
                      : filtered_row<T, 3, false>(row, above, width, out);
        default:
            return up ? filtered_row<T, 4, true>(row, above, width, out)
                      : filtered_row<T, 4, false>(row, above, width, out);
    }
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__BYTE_ORDER__) && \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
// The same rows 16 bytes at a time: PNG's byte order is a fixed shuffle of
// a group of whole pixels (BGR to RGB, 16-bit samples from little- to
// big-endian; hence little-endian machines only), and Up then subtracts
// bytes. With AVX2's byte shuffle the 4000x3000 photo's rows take 5.5 ms on
// one core here against 41 ms for the loop above, which GCC does not
// vectorise across the channels. Each load and store is 16
// bytes of which `group` are used, so the loop stops 16 bytes short of the
// row's end (the stores stay inside the row) and returns where it stopped;
// the loop above does the rest.
using Bytes16 = std::uint8_t __attribute__((vector_size(16)));

struct ByteOrder {
    Bytes16 shuffle;
    std::size_t group;  // bytes of whole pixels a shuffle moves
};

ByteOrder png_byte_order(int depth, int channels) {
    if (depth == CV_8U) {
        switch (channels) {
            case 1: return {Bytes16{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, 16};
            case 3: return {Bytes16{2, 1, 0, 5, 4, 3, 8, 7, 6, 11, 10, 9, 14, 13, 12, 15}, 15};
            default: return {Bytes16{2, 1, 0, 3, 6, 5, 4, 7, 10, 9, 8, 11, 14, 13, 12, 15}, 16};
        }
    }
    switch (channels) {  // 16-bit: each sample's two bytes swapped too
        case 1: return {Bytes16{1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14}, 16};
        case 3: return {Bytes16{5, 4, 3, 2, 1, 0, 11, 10, 9, 8, 7, 6, 12, 13, 14, 15}, 12};
        default: return {Bytes16{5, 4, 3, 2, 1, 0, 7, 6, 13, 12, 11, 10, 9, 8, 15, 14}, 16};
    }
}

CUDACONV_WIDE_LANES std::size_t shuffled_row_up(const std::uint8_t* row, const std::uint8_t* above,
                                                std::size_t bytes, ByteOrder order,
                                                std::uint8_t* out) {
    std::size_t i = 0;
    for (; i + 16 <= bytes; i += order.group) {
        Bytes16 a;
        Bytes16 b;
        std::memcpy(&a, row + i, 16);
        std::memcpy(&b, above + i, 16);
        const Bytes16 d = __builtin_shuffle(a, order.shuffle) - __builtin_shuffle(b, order.shuffle);
        std::memcpy(out + i, &d, 16);
    }
    return i;
}

CUDACONV_WIDE_LANES std::size_t shuffled_row_none(const std::uint8_t* row, std::size_t bytes,
                                                  ByteOrder order, std::uint8_t* out) {
    std::size_t i = 0;
    for (; i + 16 <= bytes; i += order.group) {
        Bytes16 a;
        std::memcpy(&a, row + i, 16);
        const Bytes16 d = __builtin_shuffle(a, order.shuffle);
        std::memcpy(out + i, &d, 16);
    }
    return i;
}

// Row y after filter, without its filter byte: the shuffled bytes, then
// the pixels they left for the loop above.
void filter_row_bytes(const cv::Mat& image, int y, bool up, std::uint8_t* out) {
    const ByteOrder order = png_byte_order(image.depth(), image.channels());
    const std::size_t pixel_bytes = image.elemSize();
    const std::size_t bytes = static_cast<std::size_t>(image.cols) * pixel_bytes;
    const std::uint8_t* row = image.ptr<std::uint8_t>(y);
    const std::uint8_t* above = up ? image.ptr<std::uint8_t>(y - 1) : nullptr;
    const std::size_t done = up ? shuffled_row_up(row, above, bytes, order, out)
                                : shuffled_row_none(row, bytes, order, out);
    const std::size_t skip_pixels = done / pixel_bytes;
    const int rest = image.cols - static_cast<int>(skip_pixels);
    if (rest == 0) return;
    if (image.depth() == CV_8U) {
        filtered_row(image.ptr<std::uint8_t>(y) + skip_pixels * image.channels(),
                     up ? image.ptr<std::uint8_t>(y - 1) + skip_pixels * image.channels() : nullptr,
                     rest, image.channels(), out + done);
    } else {
        filtered_row(image.ptr<std::uint16_t>(y) + skip_pixels * image.channels(),
                     up ? image.ptr<std::uint16_t>(y - 1) + skip_pixels * image.channels()
                        : nullptr,
                     rest, image.channels(), out + done);
    }
}
#else
void filter_row_bytes(const cv::Mat& image, int y, bool up, std::uint8_t* out) {
    if (image.depth() == CV_8U) {
        filtered_row(image.ptr<std::uint8_t>(y), up ? image.ptr<std::uint8_t>(y - 1) : nullptr,
                     image.cols, image.channels(), out);
    } else {
        filtered_row(image.ptr<std::uint16_t>(y), up ? image.ptr<std::uint16_t>(y - 1) : nullptr,
                     image.cols, image.channels(), out);
    }
}
#endif

// Row y of the image after filter (None or Up), its filter byte first.
void filter_row(const cv::Mat& image, int y, std::uint8_t filter, std::uint8_t* out) {
    out[0] = filter;
    filter_row_bytes(image, y, filter == kFilterUp && y > 0, out + 1);
}

// How the rows are compressed: libdeflate at the level asked for, or (at
// level 1) runs only (run_deflate.hpp), which is 2.4-3x faster on photos
// and edge maps and there smaller too; and the one filter for the whole
// image, None or Up.
struct Method {
    bool runs = false;
    std::uint8_t filter = kFilterUp;
};

// The method that compresses a sample of the image smallest: kSampleStrips
// strips of kStripRows rows spread down the image, through each candidate.
// Photos favour Up, filtered images such as an edge map (mostly dark with
// sparse noise) None; runs win on both (a 4000x3000 photo with Up: 5.8 MB
// in 44 ms against libdeflate's 6.2 MB in 131 ms; its edge map with None:
// 7.7 MB in 60 ms against 8.5 MB in 145 ms, on one core), and
// lose badly where strings repeat at a distance (drawings, screenshots),
// which the sample shows. At level 1 runs are taken unless they come out
// more than kRunsSlack times libdeflate's best on the sample: level 1 asks for
// speed, and a sample of 32 rows misjudges by several per cent either way
// (native photos come within 4% of libdeflate either way). The sample costs
// about 3% of the encoding. libpng's per-row heuristic (the least sum of
// absolute values) picked worse filters than either.
constexpr int kSampleStrips = 8;
constexpr int kStripRows = 4;
constexpr double kRunsSlack = 1.15;

// The level-1 rule on a sample's compressed sizes: runs, unless the string
// search's is more than kRunsSlack times smaller (or failed: 0). Used for
// the CPU's own streams and for those made on the GPU.
bool runs_close_enough(std::size_t runs, std::size_t searched) {
    return searched == 0 || static_cast<double>(runs) <= kRunsSlack * static_cast<double>(searched);
}

Method choose_method(const cv::Mat& image, std::size_t row_bytes, int level,
                     libdeflate_compressor* compressor) {
    const std::vector<int> rows = png_sample_rows(image.rows);
    std::vector<std::uint8_t> sample((row_bytes + 1) * rows.size());
    std::vector<std::uint8_t> out(
        std::max(libdeflate_zlib_compress_bound(compressor, sample.size()),
                 run_deflate_bound(sample.size())));
    std::size_t best_deflate = 0;
    std::size_t best_runs = 0;
    Method deflate_method;
    Method runs_method{true, kFilterUp};
    for (std::uint8_t filter : {kFilterUp, kFilterNone}) {
        std::uint8_t* at = sample.data();
        for (int y : rows) {
            filter_row(image, y, filter, at);
            at += row_bytes + 1;
        }
        const std::size_t size = libdeflate_zlib_compress(compressor, sample.data(), sample.size(),
                                                          out.data(), out.size());
        if (best_deflate == 0 || (size != 0 && size < best_deflate)) {
            best_deflate = size;
            deflate_method.filter = filter;
        }
        if (level == 1) {
            const std::size_t runs = run_deflate_zlib(sample.data(), sample.size(), out.data());
            if (best_runs == 0 || runs < best_runs) {
                best_runs = runs;
                runs_method.filter = filter;
            }
        }
    }
    if (level == 1 && runs_close_enough(best_runs, best_deflate)) return runs_method;
    return deflate_method;
}

struct CompressorDeleter {
    void operator()(libdeflate_compressor* c) const { libdeflate_free_compressor(c); }
};

// The file: signature, IHDR, the stream in IDATs of at most max_idat_bytes,
// IEND.
std::vector<std::uint8_t> png_file(int width, int height, int sample_bytes, int channels,
                                   const std::uint8_t* stream, std::size_t stream_size,
                                   std::size_t max_idat_bytes) {
    if (max_idat_bytes == 0 || max_idat_bytes > kMaxIdatBytes) max_idat_bytes = kMaxIdatBytes;
    std::uint8_t header[13] = {};
    for (int i = 0; i < 4; ++i) {
        header[i] = static_cast<std::uint8_t>(static_cast<std::uint32_t>(width) >> (24 - 8 * i));
        header[4 + i] =
            static_cast<std::uint8_t>(static_cast<std::uint32_t>(height) >> (24 - 8 * i));
    }
    header[8] = static_cast<std::uint8_t>(sample_bytes * 8);  // bit depth
    header[9] = colour_type(channels);
    // header[10..12]: deflate compression, adaptive filtering, no interlace

    std::vector<std::uint8_t> png(std::begin(kSignature), std::end(kSignature));
    const std::size_t chunks = (stream_size + max_idat_bytes - 1) / max_idat_bytes;
    png.reserve(sizeof kSignature + 25 + stream_size + 12 * chunks + 12);
    put_png_chunk(png, "IHDR", header, sizeof header);
    // Past max_idat_bytes the stream goes in consecutive IDATs, which readers join.
    for (std::size_t at = 0; at < stream_size; at += max_idat_bytes) {
        put_png_chunk(png, "IDAT", stream + at, std::min(max_idat_bytes, stream_size - at));
    }
    put_png_chunk(png, "IEND", nullptr, 0);
    return png;
}

}  // namespace

std::vector<int> png_sample_rows(int height) {
    const int strips = std::min(kSampleStrips, std::max(1, height / kStripRows));
    const int rows = std::min(kStripRows, height);
    // Row 0 stays out where it can: Up leaves it as it is (None), one row
    // in the image's 3000 but one in the sample's 32, where it tipped the
    // choice to libdeflate on smooth images (a 31x31 blur: runs 30% larger
    // on such a sample, 3% smaller on the whole image).
    const int top = height > rows ? 1 : 0;
    std::vector<int> sample;
    for (int s = 0; s < strips; ++s) {
        const int first = top + static_cast<int>(static_cast<long long>(height - top - rows) * s /
                                                 std::max(1, strips - 1));
        for (int y = first; y < first + rows; ++y) sample.push_back(y);
    }
    return sample;
}

std::vector<std::uint8_t> png_from_runs_stream(int width, int height, int sample_bytes,
                                               int channels, const std::vector<std::uint8_t>& zlib,
                                               const std::vector<std::uint8_t>& sample,
                                               std::size_t max_idat_bytes) {
    colour_type(channels);  // throws for a channel count we do not write
    if (width <= 0 || height <= 0 || (sample_bytes != 1 && sample_bytes != 2)) {
        throw std::invalid_argument("PNG holds 8- or 16-bit samples of a nonempty image");
    }
    std::unique_ptr<libdeflate_compressor, CompressorDeleter> compressor(
        libdeflate_alloc_compressor(1));
    if (!compressor) throw std::bad_alloc();
    // encode_png's rule at level 1 (runs_close_enough) on the sample.
    std::vector<std::uint8_t> out(
        std::max(libdeflate_zlib_compress_bound(compressor.get(), sample.size()),
                 run_deflate_bound(sample.size())));
    const std::size_t runs = run_deflate_zlib(sample.data(), sample.size(), out.data());
    const std::size_t searched = libdeflate_zlib_compress(compressor.get(), sample.data(),
                                                          sample.size(), out.data(), out.size());
    if (sample.empty() || runs_close_enough(runs, searched)) {
        return png_file(width, height, sample_bytes, channels, zlib.data(), zlib.size(),
                        max_idat_bytes);
    }
    // Strings repeat at a distance: the rows again, through libdeflate.
    const std::size_t rows_size =
        (static_cast<std::size_t>(width) * static_cast<std::size_t>(channels * sample_bytes) + 1) *
        static_cast<std::size_t>(height);
    std::unique_ptr<std::uint8_t[]> rows(new std::uint8_t[rows_size]);
    libdeflate_decompressor* inflater = libdeflate_alloc_decompressor();
    if (!inflater) throw std::bad_alloc();
    const libdeflate_result inflated = libdeflate_zlib_decompress(
        inflater, zlib.data(), zlib.size(), rows.get(), rows_size, nullptr);
    libdeflate_free_decompressor(inflater);
    if (inflated != LIBDEFLATE_SUCCESS) {
        throw std::runtime_error("the device's PNG stream does not inflate to the image's rows");
    }
    const std::size_t bound = libdeflate_zlib_compress_bound(compressor.get(), rows_size);
    std::unique_ptr<std::uint8_t[]> stream(new std::uint8_t[bound]);
    const std::size_t size =
        libdeflate_zlib_compress(compressor.get(), rows.get(), rows_size, stream.get(), bound);
    if (size == 0) throw std::runtime_error("libdeflate could not compress the rows");
    return png_file(width, height, sample_bytes, channels, stream.get(), size, max_idat_bytes);
}

std::vector<std::uint8_t> encode_png(const cv::Mat& image, int level, std::size_t max_idat_bytes,
                                     int threads) {
    if (image.empty()) throw std::invalid_argument("PNG cannot hold an empty image");
    const int depth = image.depth();
    if (depth != CV_8U && depth != CV_16U) {
        throw std::invalid_argument("PNG holds 8- or 16-bit samples");
    }
    const int channels = image.channels();
    colour_type(channels);  // throws for a channel count we do not write
    const int width = image.cols;
    const int height = image.rows;
    const std::size_t sample_bytes = depth == CV_8U ? 1 : 2;
    const std::size_t row_bytes = static_cast<std::size_t>(width) * channels * sample_bytes;

    std::unique_ptr<libdeflate_compressor, CompressorDeleter> compressor(
        libdeflate_alloc_compressor(std::clamp(level, 0, 9)));
    if (!compressor) throw std::bad_alloc();

    // The filtered rows, each after its filter byte: what IDAT compresses.
    // Buffers of new[] (not vectors, which would zero them first: 36 MB of
    // writes for a 12-megapixel RGB image, each).
    const Method method = choose_method(image, row_bytes, level, compressor.get());
    const std::size_t rows_size = (row_bytes + 1) * static_cast<std::size_t>(height);
    std::unique_ptr<std::uint8_t[]> rows(new std::uint8_t[rows_size]);
    auto filter_rows = [&](const cv::Range& range) {
        for (int y = range.start; y < range.end; ++y) {
            filter_row(image, y, method.filter,
                       rows.get() + static_cast<std::size_t>(y) * (row_bytes + 1));
        }
    };
    if (threads > 1) {
        cv::parallel_for_(cv::Range(0, height), filter_rows, threads);
    } else {
        filter_rows(cv::Range(0, height));
    }
    const std::size_t bound = method.runs
                                  ? run_deflate_bound(rows_size)
                                  : libdeflate_zlib_compress_bound(compressor.get(), rows_size);
    std::unique_ptr<std::uint8_t[]> stream(new std::uint8_t[bound]);
    const std::size_t stream_size =
        method.runs ? run_deflate_zlib(rows.get(), rows_size, stream.get(), threads)
                    : libdeflate_zlib_compress(compressor.get(), rows.get(), rows_size,
                                               stream.get(), bound);
    if (stream_size == 0) throw std::runtime_error("libdeflate could not compress the rows");
    rows.reset();

    return png_file(width, height, static_cast<int>(sample_bytes), channels, stream.get(),
                    stream_size, max_idat_bytes);
}

}  // namespace cudaconv
