// What each output format can hold, as OpenCV 4.6 really writes it (every
// row is checked by a round trip in tests/unit/test_image_io.cpp), and the
// encoder settings that keep each one from converting behind our back.
// Anything outside this table is refused before work starts, because
// OpenCV's own answer is to convert silently: float to PNG becomes 8-bit,
// 16-bit to JPEG saturates to 8-bit, 4 channels to JPEG or BMP lose alpha,
// 8-bit to PFM becomes float.
#include <algorithm>
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "base/errors.hpp"
#include "io/codec_messages.hpp"
#include "io/jpeg_writer.hpp"
#include "io/npy.hpp"
#include "io/png_encoder.hpp"
#include "io/image_io.hpp"

namespace cudaconv {
namespace {

constexpr unsigned bit(Depth d) { return 1u << static_cast<unsigned>(d); }
constexpr unsigned kU8 = bit(Depth::u8), kU16 = bit(Depth::u16), kF32 = bit(Depth::f32);
constexpr unsigned channel_bit(int channels) {
    return channels >= 0 && channels < 32 ? 1u << channels : 0u;
}
constexpr unsigned kGray = channel_bit(1), kColour = channel_bit(3), kAlpha = channel_bit(4);
// Any number of channels (.npy: a filter bank's stacked responses).
constexpr unsigned kAnyChannels = ~0u;

// libtiff's COMPRESSION_LZW: lossless for every depth. Without an explicit
// choice OpenCV writes 3-channel float TIFFs as SGILOG, which is lossy.
constexpr int kTiffLzw = 5;

struct OutputFormat {
    std::string_view name;
    std::array<std::string_view, 3> extensions;  // the first is the one suggested
    unsigned depths;
    unsigned channels;
};

constexpr std::array<OutputFormat, 11> kOutputFormats{{
    {"PNG", {".png"}, kU8 | kU16, kGray | kColour | kAlpha},
    {"JPEG", {".jpg", ".jpeg", ".jpe"}, kU8, kGray | kColour},
    {"TIFF", {".tif", ".tiff"}, kU8 | kU16 | kF32, kGray | kColour | kAlpha},
    {"OpenEXR", {".exr"}, kF32, kGray | kColour | kAlpha},
    {"PFM", {".pfm"}, kF32, kGray | kColour},
    {"BMP", {".bmp"}, kU8, kGray | kColour},
    // OpenCV writes 1 channel as 3 equal ones (WebP has no grayscale): no
    // sample changes, but the file reads back with 3 channels.
    {"WebP", {".webp"}, kU8, kGray | kColour | kAlpha},
    {"PPM", {".ppm"}, kU8 | kU16, kColour},
    {"PGM", {".pgm"}, kU8 | kU16, kGray},
    {"PNM", {".pnm"}, kU8 | kU16, kGray | kColour},
    // NumPy's array file, float32 (H, W, C), by our own writer (io/npy.hpp).
    {"NPY", {".npy"}, kF32, kAnyChannels},
}};

const OutputFormat* find_format(std::string_view extension) {
    for (const OutputFormat& f : kOutputFormats) {
        for (std::string_view e : f.extensions) {
            if (!e.empty() && e == extension) return &f;
        }
    }
    return nullptr;
}

std::string known_extensions() {
    std::string list;
    for (const OutputFormat& f : kOutputFormats) {
        for (std::string_view e : f.extensions) {
            if (e.empty()) continue;
            if (!list.empty()) list += ", ";
            list += e;
        }
    }
    return list;
}

// "a", "a or b", "a, b or c".
std::string one_of(const std::vector<std::string>& items, const char* separator = ", ") {
    std::string text;
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i > 0) text += i + 1 == items.size() ? " or " : separator;
        text += items[i];
    }
    return text;
}

// The formats (by their first extension) that hold this depth and channel count.
std::string formats_for(Depth depth, int channels) {
    std::vector<std::string> exts;
    for (const OutputFormat& f : kOutputFormats) {
        if ((f.depths & bit(depth)) &&
            (channels == kChannelsUnknown || (f.channels & channel_bit(channels)))) {
            exts.emplace_back(f.extensions[0]);
        }
    }
    return one_of(exts);
}

std::string depths_held(unsigned depths) {
    if (depths == kU8) return "8-bit";
    if (depths == (kU8 | kU16)) return "8- or 16-bit";
    if (depths == kF32) return "32-bit float";
    return "8-bit, 16-bit or 32-bit float";
}

std::string depth_choices(unsigned depths) {
    std::string text;
    for (Depth d : {Depth::u8, Depth::u16, Depth::f32}) {
        if (!(depths & bit(d))) continue;
        if (!text.empty()) text += "|";
        text += depth_name(d);
    }
    return text;
}

std::string channels_held(unsigned channels) {
    std::vector<std::string> counts;
    for (int c : {1, 3, 4}) {
        if (channels & channel_bit(c)) counts.push_back(std::to_string(c));
    }
    return one_of(counts) + (channels == kGray ? " channel" : " channels");
}

std::string display_name(const std::string& path) { return path == kStdStream ? "<stdout>" : path; }

std::vector<int> encoder_settings(const OutputFormat& format) {
    if (format.name == "TIFF") return {cv::IMWRITE_TIFF_COMPRESSION, kTiffLzw};
    if (format.name == "OpenEXR") return {cv::IMWRITE_EXR_TYPE, cv::IMWRITE_EXR_TYPE_FLOAT};
    return {};  // WebP without a quality is lossless
}

}  // namespace

bool is_image_extension(const std::string& extension) { return find_format(extension) != nullptr; }

void check_output_format(const std::string& path, const std::string& extension,
                         std::optional<Depth> depth, int channels) {
    const std::string name = display_name(path);
    const OutputFormat* format = find_format(extension);
    if (format == nullptr) {
        const std::string what = extension.empty() ? "no extension to tell the output format"
                                                   : "unknown output format \"" + extension + "\"";
        throw UsageError(name + ": " + what + "; cudaconv writes " + known_extensions());
    }
    if (channels != kChannelsUnknown && format->channels != kAnyChannels && channels != 1 &&
        channels != 3 && channels != 4) {
        throw UsageError(name + ": cudaconv writes 1, 3 or 4 channels, not " +
                         std::to_string(channels));
    }
    const std::string format_name(format->name);
    // The GPU machine's static OpenCV has JPEG and PNG only (GPU.md).
    if (format->name != "NPY" && !cv::haveImageWriter("x" + extension)) {
        throw UsageError(name + ": this build's OpenCV has no " + format_name +
                         " encoder; write .png or .jpg, or .pfm for f32");
    }
    if (depth && !(format->depths & bit(*depth))) {
        const std::string elsewhere = formats_for(*depth, channels);
        throw UsageError(
            name + ": " + format_name + " holds " + depths_held(format->depths) + " samples; " +
            (elsewhere.empty()
                 ? ""
                 : "write " + std::string(depth_name(*depth)) + " to " + elsewhere + ", or ") +
            "choose --depth " + depth_choices(format->depths));
    }
    if (channels != kChannelsUnknown && format->channels != kAnyChannels &&
        !(format->channels & channel_bit(channels))) {
        const bool drops_alpha = channels == 4 && (format->channels & kColour);
        const std::string problem = drops_alpha
                                        ? format_name + " has no alpha channel"
                                        : format_name + " holds " + channels_held(format->channels);
        // Called with a channel count only once the depth is known too.
        const Depth known = depth.value_or(Depth::u8);
        throw UsageError(name + ": " + problem + "; write " + std::to_string(channels) +
                         "-channel " + std::string(depth_name(known)) + " images to " +
                         formats_for(known, channels));
    }
}

bool png_rows_stream_fits(const std::string& extension, const EncodeOptions& options) {
    const OutputFormat* format = find_format(extension);
    return format && std::string_view(format->name) == "PNG" &&
           std::clamp(options.png_level, 0, 9) == 1;
}

bool is_jpeg_extension(const std::string& extension) {
    const OutputFormat* format = find_format(extension);
    return format && std::string_view(format->name) == "JPEG";
}

std::vector<std::uint8_t> encode_png_rows_stream(std::int64_t width, std::int64_t height,
                                                 Depth depth, int channels,
                                                 const std::vector<std::uint8_t>& zlib,
                                                 const std::vector<std::uint8_t>& sample,
                                                 const std::string& path) {
    const std::string name = display_name(path);
    try {
        return png_from_runs_stream(static_cast<int>(width), static_cast<int>(height),
                                    static_cast<int>(depth_bytes(depth)), channels, zlib, sample);
    } catch (const std::bad_alloc&) {
        throw WorkError(name + ": out of memory encoding PNG");
    } catch (const std::exception& e) {
        throw WorkError(name + ": cannot encode PNG: " + e.what());
    }
}

std::vector<std::uint8_t> encode_image(const cv::Mat& image, const std::string& extension,
                                       const EncodeOptions& options, const std::string& path) {
    const std::string name = display_name(path);
    if (image.empty()) throw WorkError(name + ": cannot encode an empty image");
    const int cv_depth = image.depth();
    if (cv_depth != CV_8U && cv_depth != CV_16U && cv_depth != CV_32F) {
        throw WorkError(name + ": cannot encode samples of OpenCV depth " +
                        std::to_string(cv_depth));
    }
    // RGBA and 16-bit images are made fit for a JPEG (io/jpeg_fit.hpp).
    const cv::Mat& fitted = is_jpeg_extension(extension) ? fit_for_jpeg(image, options.background)
                                                         : image;
    check_output_format(path, extension, depth_of(fitted), fitted.channels());
    const OutputFormat& format = *find_format(extension);

    if (format.name == "PNG") {  // our own writer: see png_encoder.hpp
        try {
            return encode_png(image, std::clamp(options.png_level, 0, 9), kMaxIdatBytes,
                              options.threads);
        } catch (const std::bad_alloc&) {
            throw WorkError(name + ": out of memory encoding PNG");
        } catch (const std::exception& e) {
            throw WorkError(name + ": cannot encode PNG: " + e.what());
        }
    }
    if (format.name == "JPEG") {  // our own writer too: see jpeg_writer.hpp
        try {
            return encode_jpeg(fitted, options.jpeg);
        } catch (const std::bad_alloc&) {
            throw WorkError(name + ": out of memory encoding JPEG");
        } catch (const std::exception& e) {
            throw WorkError(name + ": cannot encode JPEG: " + e.what());
        }
    }
    if (format.name == "NPY") {
        try {
            // RGB(A), as NumPy's image libraries (imageio, Pillow, Keras) hold colours.
            cv::Mat packed = image.isContinuous() ? image : image.clone();
            if (options.channels_are_colour && image.channels() == 3) {
                cv::cvtColor(image, packed, cv::COLOR_BGR2RGB);
            } else if (options.channels_are_colour && image.channels() == 4) {
                cv::cvtColor(image, packed, cv::COLOR_BGRA2RGBA);
            }
            return encode_npy({packed.rows, packed.cols, packed.channels()}, packed.ptr<float>());
        } catch (const std::bad_alloc&) {
            throw WorkError(name + ": out of memory encoding NPY");
        }
    }
    detail::CodecMessages messages;  // an encoder's complaints become our error
    std::vector<std::uint8_t> bytes;
    try {
        if (cv::imencode(extension, image, bytes, encoder_settings(format))) return bytes;
    } catch (const cv::Exception& e) {
        // OpenCV asserts "size > 0" where libwebp returns nothing, which it
        // does when an allocation fails (its other failures are checked
        // before: the sizes and the samples).
        if (format.name == "WebP" && detail::one_line(e.err) == "size > 0") {
            throw WorkError(name + ": out of memory encoding WebP (libwebp made no file)");
        }
        throw WorkError(name + ": cannot encode " + std::string(format.name) + ": " +
                        detail::one_line(e.err));
    } catch (const std::bad_alloc&) {
        throw WorkError(name + ": out of memory encoding " + std::string(format.name));
    }
    const std::string said = messages.summary();
    throw WorkError(name + ": cannot encode " + std::string(format.name) +
                    (said.empty() ? "" : " (" + said + ")"));
}

}  // namespace cudaconv
