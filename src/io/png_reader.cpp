// libpng's progressive reader: png_process_data takes the file a piece at a
// time and calls back with the header (on_info: the checks, then the
// transformations OpenCV asks for, then the image's allocation), with each
// row (on_row) and at IEND (on_end). libpng reports errors by longjmp; the
// callbacks catch C++ exceptions themselves and hand them over as a libpng
// error, so that no exception crosses libpng's C frames and no longjmp
// skips a C++ destructor.
#include "io/image_block.hpp"
#include "io/png_reader.hpp"

#include <png.h>

#include <algorithm>
#include <csetjmp>
#include <cstring>
#include <exception>

#include "base/errors.hpp"

namespace cudaconv {
namespace {

// Pieces the file is fed in; the cancel predicate is polled between them
// and every kRowsPerPoll rows (a piece of deflate data can inflate into
// tens of millions of short rows).
constexpr std::size_t kPieceBytes = 64 * 1024;
constexpr unsigned kRowsPerPoll = 64;
// PNG's own limit a side (2^31 - 1): --max-pixels and the memory check
// decide what is too large, not libpng's default of a million.
constexpr png_uint_32 kMostSide = 0x7FFFFFFF;
// Only the critical chunks and tRNS are read, none of which needs 1 MB
// (a full palette and its transparency take 1 KB); the limits bound what
// libpng may allocate for any chunk and keep all the same.
constexpr png_alloc_size_t kMostChunkBytes = 1 << 20;
constexpr png_uint_32 kMostChunksKept = 16;
constexpr std::size_t kMessageBytes = 256;

// libpng's words, kept without allocating (its callbacks must not throw).
void keep(char (&to)[kMessageBytes], const char* message) {
    std::strncpy(to, message, kMessageBytes - 1);
    to[kMessageBytes - 1] = '\0';
}

// libpng's words for image data past the last row: its progressive and
// sequential readers' warnings, and its error for an IDAT chunk longer than
// the image's rows could take, compressed or not.
bool is_extra_image_data(const char* message) {
    for (const char* words : {"Extra compressed data", "Extra compression data",
                              "Too much image data", "IDAT: chunk data is too large"}) {
        if (std::strstr(message, words) != nullptr) return true;
    }
    return false;
}

class PngDecoder {
public:
    PngDecoder(const std::string& name, const ReadOptions& options)
        : name_(name), options_(options) {}
    ~PngDecoder() {
        if (png_ != nullptr) png_destroy_read_struct(&png_, &info_, nullptr);
    }
    PngDecoder(const PngDecoder&) = delete;
    PngDecoder& operator=(const PngDecoder&) = delete;

    cv::Mat decode(const std::uint8_t* data, std::size_t size);

private:
    static PngDecoder& of(png_structp png) {
        return *static_cast<PngDecoder*>(png_get_progressive_ptr(png));
    }

    static void on_error(png_structp png, png_const_charp message) {
        PngDecoder& d = *static_cast<PngDecoder*>(png_get_error_ptr(png));
        keep(d.error_, message);
        d.extra_image_data_ = d.extra_image_data_ || is_extra_image_data(message);
        png_longjmp(png, 1);
    }

    // Warnings about image data are corruption; the rest (an ancillary
    // chunk's CRC, say) change no sample, as with OpenCV.
    static void on_warning(png_structp png, png_const_charp message) {
        PngDecoder& d = *static_cast<PngDecoder*>(png_get_error_ptr(png));
        if (is_extra_image_data(message)) {
            d.extra_image_data_ = true;
        } else if (std::strstr(message, "IDAT") != nullptr && d.image_data_warning_[0] == '\0') {
            keep(d.image_data_warning_, message);
        }
    }

    static void on_info(png_structp png, png_infop /*info*/) {
        PngDecoder& d = of(png);
        try {
            d.start_image();
        } catch (...) {
            d.failure_ = std::current_exception();
        }
        if (d.failure_) png_error(png, "stopped by cudaconv");
    }

    static void on_row(png_structp png, png_bytep new_row, png_uint_32 row, int /*pass*/) {
        PngDecoder& d = of(png);
        if (new_row != nullptr) {
            png_progressive_combine_row(png, d.image_.ptr(static_cast<int>(row)), new_row);
        }
        if (++d.rows_since_poll_ < kRowsPerPoll) return;
        d.rows_since_poll_ = 0;
        if (d.cancel_requested()) png_error(png, "stopped by cudaconv");
    }

    static void on_end(png_structp png, png_infop /*info*/) { of(png).ended_ = true; }

    bool configure();
    bool process(const std::uint8_t* data, std::size_t size);
    void start_image();
    bool cancel_requested() noexcept;
    bool rows_complete() const;
    WorkError corrupt(const std::string& why) const {
        return WorkError(name_ + ": truncated or corrupt PNG data (" + why + ")");
    }
    // IHDR's, which libpng has read before anything else can go wrong.
    std::string size_text() const {
        return std::to_string(png_get_image_width(png_, info_)) + "x" +
               std::to_string(png_get_image_height(png_, info_));
    }

    const std::string& name_;
    const ReadOptions& options_;
    png_structp png_ = nullptr;
    png_infop info_ = nullptr;
    ImageShape shape_;
    cv::Mat image_;
    bool interlaced_ = false;
    bool ended_ = false;             // IEND reached
    bool cancelled_ = false;         // options_.cancelled said so
    bool extra_image_data_ = false;  // rows went on past the last one
    unsigned rows_since_poll_ = 0;
    std::exception_ptr failure_;  // thrown in a callback: rethrown once libpng has let go
    char error_[kMessageBytes] = {};
    char image_data_warning_[kMessageBytes] = {};
};

// libpng long-jumps back into the function that set the jump, here and in
// process(): neither holds anything with a destructor.
bool PngDecoder::configure() {
    if (setjmp(png_jmpbuf(png_)) != 0) return false;
    png_set_user_limits(png_, kMostSide, kMostSide);
    png_set_chunk_malloc_max(png_, kMostChunkBytes);
    png_set_chunk_cache_max(png_, kMostChunksKept);
    // Negative: every ancillary chunk libpng knows, but tRNS, and every
    // unknown one is skipped unread (no zTXt or iCCP is ever inflated).
    png_set_keep_unknown_chunks(png_, PNG_HANDLE_CHUNK_NEVER, nullptr, -1);
    // A benign error (an IDAT checksum that does not match, a bad tRNS) is
    // an error: the samples would not be the file's.
    png_set_benign_errors(png_, 0);
    png_set_progressive_read_fn(png_, this, on_info, on_row, on_end);
    return true;
}

bool PngDecoder::process(const std::uint8_t* data, std::size_t size) {
    if (setjmp(png_jmpbuf(png_)) != 0) return false;
    png_process_data(png_, info_, const_cast<png_bytep>(data), size);
    return true;
}

// What OpenCV 4.6 does (grfmt_png.cpp): its type from the header
// (readHeader), the same transformations in the same order (readData).
void PngDecoder::start_image() {
    png_uint_32 width = 0, height = 0;
    int bit_depth = 0, colour_type = 0, interlace = 0;
    png_get_IHDR(png_, info_, &width, &height, &bit_depth, &colour_type, &interlace, nullptr,
                 nullptr);
    int channels = 1;
    if (colour_type == PNG_COLOR_TYPE_RGB || colour_type == PNG_COLOR_TYPE_PALETTE) {
        png_bytep trans = nullptr;
        int transparent = 0;
        png_color_16p trans_colour = nullptr;
        png_get_tRNS(png_, info_, &trans, &transparent, &trans_colour);
        channels = transparent > 0 ? 4 : 3;
    } else if (colour_type == PNG_COLOR_TYPE_GRAY_ALPHA ||
               colour_type == PNG_COLOR_TYPE_RGB_ALPHA) {
        channels = 4;
    }
    const int sample_bytes = bit_depth == 16 ? 2 : 1;
    shape_ = {width, height, channels, sample_bytes, channels * sample_bytes};
    check_shape(shape_, name_, options_);
    if (options_.accepted) options_.accepted(shape_);

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    png_set_swap(png_);  // 16-bit samples in the machine's order
#endif
    if (channels < 4) {
        png_set_strip_alpha(png_);
    } else {
        png_set_tRNS_to_alpha(png_);
    }
    if (colour_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png_);
    const bool coloured = (colour_type & PNG_COLOR_MASK_COLOR) != 0;
    if (!coloured && bit_depth < 8) png_set_expand_gray_1_2_4_to_8(png_);
    if (coloured && channels > 1) {
        png_set_bgr(png_);
    } else if (channels > 1) {
        png_set_gray_to_rgb(png_);
    } else {
        png_set_rgb_to_gray(png_, PNG_ERROR_ACTION_NONE, 0.299, 0.587);
    }
    png_set_interlace_handling(png_);
    png_read_update_info(png_, info_);
    interlaced_ = interlace != PNG_INTERLACE_NONE;

    // libpng writes a whole row of its layout into each of the image's.
    const std::size_t row_bytes = std::size_t{width} * static_cast<std::size_t>(channels) *
                                  static_cast<std::size_t>(sample_bytes);
    if (png_get_rowbytes(png_, info_) != row_bytes) {
        throw WorkError(name_ + ": cannot decode PNG data: libpng's rows are not " +
                        std::to_string(row_bytes) + " bytes");
    }
    reporting_out_of_memory(name_, shape_, options_, [&] {
        image_ = image_with_slack(static_cast<int>(height), static_cast<int>(width),
                                  CV_MAKETYPE(sample_bytes == 2 ? CV_16U : CV_8U, channels));
    });
}

bool PngDecoder::cancel_requested() noexcept {
    try {
        cancelled_ = cancelled_ || (options_.cancelled && options_.cancelled());
    } catch (...) {
        failure_ = std::current_exception();
    }
    return cancelled_ || failure_;
}

// libpng counts rows as they come: a plain image's up to its height, an
// interlaced one's passes up to 7.
bool PngDecoder::rows_complete() const {
    if (interlaced_) return png_get_current_pass_number(png_) >= 7;
    return png_get_current_row_number(png_) >= static_cast<png_uint_32>(shape_.height);
}

cv::Mat PngDecoder::decode(const std::uint8_t* data, std::size_t size) {
    png_ = png_create_read_struct(PNG_LIBPNG_VER_STRING, this, on_error, on_warning);
    if (png_ != nullptr) info_ = png_create_info_struct(png_);
    if (info_ == nullptr || !configure()) {
        throw WorkError(name_ + ": cannot start libpng's reader (out of memory)");
    }
    for (std::size_t at = 0; at < size && !ended_ && !extra_image_data_; at += kPieceBytes) {
        if (cancel_requested() || !process(data + at, std::min(kPieceBytes, size - at))) break;
    }
    if (failure_) std::rethrow_exception(failure_);
    if (cancelled_) throw Cancelled(name_ + ": decoding stopped on request");
    if (extra_image_data_) throw corrupt("more image data than its " + size_text() + " pixels");
    if (error_[0] != '\0') throw corrupt(std::string("libpng: ") + error_);
    if (image_.empty()) throw corrupt("it ends before its image data");
    if (image_data_warning_[0] != '\0') {
        throw corrupt(std::string("libpng: ") + image_data_warning_);
    }
    if (!rows_complete()) throw corrupt("not enough image data for its " + size_text() + " pixels");
    if (!ended_) throw corrupt("it ends before its IEND chunk");
    return std::move(image_);
}

}  // namespace

cv::Mat decode_png(const std::uint8_t* data, std::size_t size, const std::string& name,
                   const ReadOptions& options) {
    return PngDecoder(name, options).decode(data, size);
}

}  // namespace cudaconv
