#pragma once
// A look at an encoded image before it is decoded, for what the decoders do
// not tell: which format it is (so a failure can say "not an image" or
// "corrupt PNG"), whether a JPEG or PNG stops before its end marker (libjpeg
// decodes a truncated JPEG from memory without a word) or is far too small
// for the size it claims, that size itself in every format (so that
// --max-pixels and the memory check come before any buffer is made), and a
// TIFF's sample type and channel count, which OpenCV either refuses with a
// bare assertion or decodes into a type cudaconv cannot filter.
#include <cstddef>
#include <cstdint>
#include <string>

namespace cudaconv::detail {

enum class ImageFormat : std::uint8_t {
    unknown,
    jpeg,
    png,
    tiff,
    webp,
    bmp,
    pnm,
    pfm,
    exr,
    hdr,
    jpeg2000,
    sun_raster,
    npy  // NumPy's array file, float32 (io/npy.hpp): read by cudaconv, not OpenCV
};

struct FormatProbe {
    ImageFormat format = ImageFormat::unknown;
    std::int64_t width = 0;  // 0 when the header cannot be read
    std::int64_t height = 0;
    // What OpenCV decodes a JPEG or PNG into (cv::IMREAD_UNCHANGED), told
    // from the header: a prediction, for buffers made before the decode
    // (the decoded image itself is what counts); 0 when not told.
    int channels = 0;
    int sample_bytes = 0;
    // The bytes a decoded pixel takes: channels * sample_bytes where those
    // are told, else the most this format's decoder gives a pixel; 0 when
    // the size is not told.
    int pixel_bytes = 0;
    // A JPEG's EXIF orientation (io/exif_orientation.hpp), 1 to 8; 1 for
    // every other format and a JPEG without one.
    int orientation = 1;
    std::string problem;  // non-empty: why decoding must not be tried
};

FormatProbe probe_image(const std::uint8_t* data, std::size_t size);

// The format the first bytes name (kSniffBytes of them tell; fewer where
// the data is shorter), without looking further: reading can stop at once
// on bytes that are no image at all.
constexpr std::size_t kSniffBytes = 12;
ImageFormat sniff_format(const std::uint8_t* data, std::size_t size);

const char* format_name(ImageFormat format);  // "JPEG", "PNG", ...

// OpenCV 4.6 decodes these only from a file: imdecode first copies the bytes
// to a temporary file of its own (OPENCV_TEMP_PATH, else /tmp).
bool decodes_from_file_only(ImageFormat format);

// For "not an image" messages: every format this OpenCV build reads.
constexpr const char* kReadableFormats =
    "JPEG, PNG, TIFF, WebP, BMP, PBM/PGM/PPM/PAM, PFM, OpenEXR, Radiance HDR, JPEG 2000, "
    "Sun raster and NumPy .npy (float32)";

}  // namespace cudaconv::detail
