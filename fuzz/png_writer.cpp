// Fuzz target: cudaconv's PNG writer (src/io/png_encoder.hpp) on images the
// input describes, each file checked by readers that are not cudaconv's:
// its chunks and CRCs, its IDAT stream inflated by zlib (which must end
// exactly where the data does, with the rows' exact size), and its pixels
// decoded by libpng, warnings and benign errors counted as failures, and
// compared sample by sample with the image. Input layout:
//   byte 0, 1  width and height, scaled by the size class
//   byte 2     bits 0-1: channels - 1 (2 channels must be refused);
//              bit 2: 16-bit samples; bits 3-4: size class (0-1 up to
//              32x32, 2 up to 256x64, 3 up to 512x256: 16-bit RGBA past
//              768 KB of rows is several deflate parts); bit 5: the image
//              is a view into a larger one (rows not contiguous); bits 6-7:
//              threads - 1
//   byte 3     level, modulo 10
//   byte 4     IDAT chunk size in 16-byte units (0: the default)
//   the rest   the samples' bytes, repeated to fill the image (zeros if none)
#include <png.h>
#include <zlib.h>

#include <opencv2/core.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "checks.hpp"
#include "io/png_encoder.hpp"

namespace {

struct Params {
    int width = 1;
    int height = 1;
    int channels = 1;
    bool wide = false;  // 16-bit samples
    bool view = false;
    int threads = 1;
    int level = 0;
    std::size_t max_idat_bytes = cudaconv::kMaxIdatBytes;
};

Params read_params(const std::uint8_t* data) {
    Params p;
    const int flags = data[2];
    switch ((flags >> 3) & 3) {
        case 2:
            p.width = 1 + data[0];
            p.height = 1 + data[1] % 64;
            break;
        case 3:
            p.width = 2 * (1 + data[0]);
            p.height = 1 + data[1];
            break;
        default: p.width = 1 + data[0] % 32; p.height = 1 + data[1] % 32;
    }
    p.channels = 1 + (flags & 3);
    p.wide = (flags & 4) != 0;
    p.view = (flags & 32) != 0;
    p.threads = 1 + (flags >> 6);
    p.level = data[3] % 10;
    if (data[4] != 0) p.max_idat_bytes = std::size_t{16} * data[4];
    return p;
}

// The image, its sample bytes from `bytes` over and over; a view into a
// larger image filled with 0xA5 when p.view.
cv::Mat make_image(const Params& p, const std::uint8_t* bytes, std::size_t size) {
    const int type = CV_MAKETYPE(p.wide ? CV_16U : CV_8U, p.channels);
    cv::Mat image = p.view ? cv::Mat(p.height + 2, p.width + 3, type,
                                     cv::Scalar::all(0xA5))(cv::Rect(2, 1, p.width, p.height))
                           : cv::Mat(p.height, p.width, type);
    std::size_t k = 0;
    for (int y = 0; y < image.rows; ++y) {
        std::uint8_t* row = image.ptr<std::uint8_t>(y);
        const std::size_t row_bytes = static_cast<std::size_t>(image.cols) * image.elemSize();
        for (std::size_t i = 0; i < row_bytes; ++i, ++k) row[i] = size > 0 ? bytes[k % size] : 0;
    }
    return image;
}

std::uint32_t be32(const std::uint8_t* p) {
    return std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 | p[3];
}

// Signature, IHDR, IDATs of at most max_idat_bytes, an empty IEND at the very
// end, every CRC right; returns the IDATs' data joined.
std::vector<std::uint8_t> check_chunks(const std::vector<std::uint8_t>& png, const Params& p) {
    static constexpr std::uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    FUZZ_CHECK(png.size() >= 8 && std::memcmp(png.data(), kSignature, 8) == 0, "no signature");
    std::vector<std::uint8_t> idat;
    std::size_t at = 8;
    int index = 0;
    bool ended = false;
    bool short_idat = false;  // only the last IDAT may be shorter than the limit
    while (at < png.size()) {
        FUZZ_CHECK(!ended, "bytes after IEND");
        FUZZ_CHECK(png.size() - at >= 12, "chunk %d cut short", index);
        const std::uint32_t length = be32(&png[at]);
        FUZZ_CHECK(length <= 0x7FFFFFFFu && png.size() - at - 12 >= length,
                   "chunk %d claims %u bytes", index, length);
        const std::uint8_t* type = &png[at + 4];
        const std::uint8_t* body = &png[at + 8];
        const std::uint32_t crc = be32(body + length);
        FUZZ_CHECK(crc == crc32(crc32(0, type, 4), body, length), "chunk %d: wrong CRC", index);
        const std::string name(reinterpret_cast<const char*>(type), 4);
        if (index == 0) {
            FUZZ_CHECK(name == "IHDR" && length == 13, "the first chunk is %s", name.c_str());
        } else if (name == "IDAT") {
            FUZZ_CHECK(length >= 1 && length <= p.max_idat_bytes, "IDAT of %u bytes (at most %zu)",
                       length, p.max_idat_bytes);
            FUZZ_CHECK(!short_idat, "an IDAT after a short one");
            short_idat = length < p.max_idat_bytes;
            idat.insert(idat.end(), body, body + length);
        } else {
            FUZZ_CHECK(name == "IEND" && length == 0, "unexpected chunk %s", name.c_str());
            ended = true;
        }
        at += 12 + std::size_t{length};
        ++index;
    }
    FUZZ_CHECK(ended, "no IEND");
    FUZZ_CHECK(!idat.empty(), "no IDAT");
    return idat;
}

// zlib's inflate: one stream that ends exactly where the IDAT data does and
// holds exactly the filtered rows, each after a None (0) or Up (2) byte.
void check_stream(const std::vector<std::uint8_t>& idat, const Params& p) {
    const std::size_t row_bytes =
        static_cast<std::size_t>(p.width) * p.channels * (p.wide ? 2 : 1) + 1;
    const std::size_t expected = row_bytes * static_cast<std::size_t>(p.height);
    std::vector<std::uint8_t> rows(expected + 1);
    z_stream z{};
    FUZZ_CHECK(inflateInit(&z) == Z_OK, "inflateInit");
    z.next_in = const_cast<Bytef*>(idat.data());
    z.avail_in = static_cast<uInt>(idat.size());
    z.next_out = rows.data();
    z.avail_out = static_cast<uInt>(rows.size());
    const int status = inflate(&z, Z_FINISH);
    const std::string problem = z.msg != nullptr ? z.msg : "";
    const uLong produced = z.total_out;
    const uInt left_in = z.avail_in;
    inflateEnd(&z);
    FUZZ_CHECK(status == Z_STREAM_END, "inflate: %d (%s) after %lu bytes", status, problem.c_str(),
               produced);
    FUZZ_CHECK(left_in == 0, "%u bytes after the stream's end", left_in);
    FUZZ_CHECK(produced == expected, "%lu bytes of rows, expected %zu", produced, expected);
    for (int y = 0; y < p.height; ++y) {
        const std::uint8_t filter = rows[static_cast<std::size_t>(y) * row_bytes];
        FUZZ_CHECK(filter == 0 || filter == 2, "row %d: filter %u", y, filter);
    }
}

struct Source {
    const std::vector<std::uint8_t>* png;
    std::size_t at = 0;
};

void read_bytes(png_structp png_ptr, png_bytep out, png_size_t n) {
    auto* source = static_cast<Source*>(png_get_io_ptr(png_ptr));
    FUZZ_CHECK(n <= source->png->size() - source->at, "libpng reads past the end");
    std::memcpy(out, source->png->data() + source->at, n);
    source->at += n;
}

void libpng_failed(png_structp, png_const_charp message) {
    FUZZ_CHECK(false, "libpng: %s", message);
}

// libpng's decode, compared sample by sample: PNG holds RGB(A) where the
// image holds BGR(A), 16-bit samples big-endian.
void check_pixels(const std::vector<std::uint8_t>& png, const cv::Mat& image, const Params& p) {
    png_structp png_ptr =
        png_create_read_struct(PNG_LIBPNG_VER_STRING, nullptr, libpng_failed, libpng_failed);
    png_infop info = png_create_info_struct(png_ptr);
    FUZZ_CHECK(png_ptr != nullptr && info != nullptr, "libpng's structs");
    png_set_benign_errors(png_ptr, 0);
    Source source{&png};
    png_set_read_fn(png_ptr, &source, read_bytes);
    png_read_info(png_ptr, info);
    const int colour = p.channels == 1   ? PNG_COLOR_TYPE_GRAY
                       : p.channels == 3 ? PNG_COLOR_TYPE_RGB
                                         : PNG_COLOR_TYPE_RGB_ALPHA;
    FUZZ_CHECK(png_get_image_width(png_ptr, info) == static_cast<png_uint_32>(p.width) &&
                   png_get_image_height(png_ptr, info) == static_cast<png_uint_32>(p.height),
               "IHDR says %ux%u", png_get_image_width(png_ptr, info),
               png_get_image_height(png_ptr, info));
    FUZZ_CHECK(png_get_bit_depth(png_ptr, info) == (p.wide ? 16 : 8), "bit depth %d",
               png_get_bit_depth(png_ptr, info));
    FUZZ_CHECK(png_get_color_type(png_ptr, info) == colour, "colour type %d",
               png_get_color_type(png_ptr, info));
    FUZZ_CHECK(png_get_interlace_type(png_ptr, info) == PNG_INTERLACE_NONE, "interlaced");

    constexpr int kFrom[4] = {2, 1, 0, 3};  // PNG's channel c is BGR(A)'s kFrom[c]
    std::vector<std::uint8_t> row(png_get_rowbytes(png_ptr, info));
    for (int y = 0; y < p.height; ++y) {
        png_read_row(png_ptr, row.data(), nullptr);
        for (int x = 0; x < p.width; ++x) {
            for (int c = 0; c < p.channels; ++c) {
                const int from = p.channels == 1 ? 0 : kFrom[c];
                const std::size_t i = static_cast<std::size_t>(x) * p.channels + c;
                const unsigned got = p.wide ? (unsigned{row[2 * i]} << 8 | row[2 * i + 1]) : row[i];
                const unsigned want = p.wide ? image.ptr<std::uint16_t>(y)[x * p.channels + from]
                                             : image.ptr<std::uint8_t>(y)[x * p.channels + from];
                FUZZ_CHECK(got == want, "x=%d y=%d channel %d: decoded %u, written %u", x, y, c,
                           got, want);
            }
        }
    }
    png_read_end(png_ptr, nullptr);
    FUZZ_CHECK(source.at == png.size(), "libpng stopped %zu bytes before the end",
               png.size() - source.at);
    png_destroy_read_struct(&png_ptr, &info, nullptr);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    constexpr std::size_t kHeaderBytes = 5;
    if (size < kHeaderBytes) return 0;
    const Params p = read_params(data);
    const cv::Mat image = make_image(p, data + kHeaderBytes, size - kHeaderBytes);

    if (p.channels == 2) {
        bool refused = false;
        try {
            cudaconv::encode_png(image, p.level, p.max_idat_bytes, p.threads);
        } catch (const std::invalid_argument&) {
            refused = true;
        }
        FUZZ_CHECK(refused, "a 2-channel image was written");
        return 0;
    }
    const std::vector<std::uint8_t> png =
        cudaconv::encode_png(image, p.level, p.max_idat_bytes, p.threads);
    if (p.threads > 1) {
        FUZZ_CHECK(png == cudaconv::encode_png(image, p.level, p.max_idat_bytes, 1),
                   "%d threads wrote other bytes than one", p.threads);
    }
    check_stream(check_chunks(png, p), p);
    check_pixels(png, image, p);
    return 0;
}
