#pragma once
// Reading, encoding and atomically writing images: PNG read by cudaconv's
// own reader (png_reader.hpp), the other formats through OpenCV. Every
// failure is an exception whose message starts with the file name.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <opencv2/core.hpp>

#include "core/jpeg_settings.hpp"
#include "core/types.hpp"
#include "io/decode_limits.hpp"
#include "io/jpeg_fit.hpp"

namespace cudaconv {

constexpr const char* kStdStream = "-";  // stdin as input, stdout as output

// Call once at program start, before other threads: silences OpenCV's own
// logging, enables its OpenEXR codec (OpenCV 4.6 disables it unless
// OPENCV_IO_ENABLE_OPENEXR is set), and keeps what the codec libraries print
// on stderr while a thread decodes or encodes (libjpeg's "Corrupt JPEG
// data", libpng's errors, imdecode's "can't read data") for our own one-line
// errors instead of letting it reach the user. To do that it replaces the C
// `stderr` stream and std::cerr's buffer with pass-through filters, so
// fileno(stderr) is -1 afterwards; create loggers that test for a terminal
// before calling it. Safe to call more than once.
void configure_opencv_io();

// Decodes as cv::imdecode with IMREAD_UNCHANGED does: 8/16-bit unsigned or
// 32-bit float samples, 1, 3 or 4 interleaved channels (BGR order), then
// turns a JPEG upright by its EXIF orientation unless options.auto_orient
// is off (io/exif_orientation.hpp). `-`
// reads stdin. Throws WorkError "PATH: problem" for missing, unreadable,
// empty, truncated, corrupt, non-image or unsupported inputs, and for those
// the options' checks refuse (decode_limits.hpp): before decoding where the
// header tells the size, else once decoded. Throws Cancelled when
// options.cancelled says so during a PNG's decode.
cv::Mat read_image(const std::string& path, const ReadOptions& options = {});

// read_image in two steps, for a caller that may decode elsewhere (the
// GPU's JPEG decoder): the file's bytes, with every check read_image makes
// before decoding already passed; then their decoding, with the rest.
struct EncodedImage {
    std::string name;  // for messages: the path, or <stdin>
    std::string path;  // empty for stdin
    std::vector<std::uint8_t> bytes;
    bool is_jpeg = false;
    // The EXIF orientation decode_image turns the pixels upright from (1:
    // none, or ReadOptions::auto_orient off); io/exif_orientation.hpp.
    int orientation = 1;
};
EncodedImage read_encoded_image(const std::string& path, const ReadOptions& options = {});

// A file's first 256 KiB (all of a shorter one; nothing for stdin, a pipe,
// a FIFO or a device, which can be read only once, or a file that cannot
// be read): enough for the header any probe reads, a JPEG's frame header
// past a large EXIF block included. For looks before any work; reading
// the file says what is wrong with it.
std::vector<std::uint8_t> read_file_head(const std::string& path);
cv::Mat decode_image(const EncodedImage& image, const ReadOptions& options = {});

Depth depth_of(const cv::Mat& m);  // the Mat must hold u8, u16 or f32 samples
int cv_type_of(Depth depth, int channels);
ImageView view_of(cv::Mat& m);
ConstImageView view_of(const cv::Mat& m);

struct EncodeOptions {
    JpegSettings jpeg;  // quality and chroma sampling
    int png_level = 1;  // 0..9; 1 is zlib's fastest that still compresses
    // Threads one PNG may be compressed on (level 1): a batch's workers each
    // take one; a single image, every core.
    int threads = 1;
    // What alpha is flattened onto in a JPEG (--background; io/jpeg_fit.hpp).
    Rgb8 background = kWhite;
    // Whether 3 or 4 channels are colours in OpenCV's BGR(A) order, which a
    // .npy output holds as NumPy's image libraries do, RGB(A); false for
    // channels that are not colours (a bank's stacked responses), written
    // in their order.
    bool channels_are_colour = true;
};

// The lower-case extension with its dot (".png") of a path, or "".
std::string extension_of(const std::string& path);

// Whether a lower-case extension (".png") names an image format cudaconv
// reads and writes: what folder walks (compare, batches) pick up.
bool is_image_extension(const std::string& extension);

// Checks, before any work, that an output with this extension can hold
// this depth and channel count; throws UsageError "PATH: problem" naming
// what would work instead (e.g. float output needs .tif, .exr, .pfm or .npy).
// Before the input is decoded its depth (with --depth same) and channel
// count are not known: pass std::nullopt and kChannelsUnknown, and only
// what is known is checked.
constexpr int kChannelsUnknown = 0;
void check_output_format(const std::string& path, const std::string& extension,
                         std::optional<Depth> depth, int channels);

// Encodes in memory (so a failed encode never touches the destination).
std::vector<std::uint8_t> encode_image(const cv::Mat& image, const std::string& extension,
                                       const EncodeOptions& options, const std::string& path);

// Whether encode_image writes this extension with cudaconv's own PNG writer
// at level 1, whose runs-only stream a CUDA variant can make on the device
// instead (RunOptions::png_rows).
bool png_rows_stream_fits(const std::string& extension, const EncodeOptions& options);

// Whether a lower-case extension (".jpg") names JPEG, which a CUDA variant
// can encode on the device instead (RunOptions::jpeg).
bool is_jpeg_extension(const std::string& extension);

// The PNG file around such a stream (png_encoder.hpp's png_from_runs_stream),
// with encode_image's errors: WorkError "PATH: problem".
std::vector<std::uint8_t> encode_png_rows_stream(std::int64_t width, std::int64_t height,
                                                 Depth depth, int channels,
                                                 const std::vector<std::uint8_t>& zlib,
                                                 const std::vector<std::uint8_t>& sample,
                                                 const std::string& path);

// Writes to a temporary file in the destination's folder, then renames it
// over the destination, so readers never see a partial file. `-` writes
// stdout. Throws WorkError "PATH: problem" and leaves nothing behind.
void write_file_atomically(const std::string& path, const std::vector<std::uint8_t>& bytes);

// An output written in full to a temporary file beside its destination
// (the same folder, so that renaming it there is atomic), registered for
// remove_pending_temp_files(), and not yet in place: commit() renames it
// over the destination; destroyed uncommitted, it is removed. Staging
// every file of a set before committing any means a failure while writing
// them leaves the files already there untouched. `path` names a file, not
// `-`. Both steps throw WorkError "PATH: problem" and leave nothing behind.
class StagedFile {
public:
    StagedFile(const std::string& path, const std::vector<std::uint8_t>& bytes);
    StagedFile(StagedFile&&) noexcept;
    StagedFile& operator=(StagedFile&&) noexcept;
    ~StagedFile();

    void commit();

private:
    class Temp;
    std::string path_;
    std::unique_ptr<Temp> temp_;
};

// Writes all of `data` to fd, through short writes, EINTR, and EAGAIN on a
// non-blocking descriptor (it waits until it drains). Returns 0 or the
// errno of the failure (EIO where a write made no progress).
int write_all(int fd, const std::uint8_t* data, std::size_t size);

// Why an output cannot go into `folder` (the parent folder of its path), or
// "" when files can be made in `folder` ("" is the current folder), else
// why not: "the folder F does not exist", "F is a file, not a folder", "the
// folder F is not writable (Permission denied)". Checked before any work,
// so that a mistyped -o fails at once rather than after the filtering.
std::string unwritable_folder_reason(const std::string& folder);

// Unlinks the temporary files that write_file_atomically and StagedFile are
// writing or hold at this moment, so an interrupted run leaves nothing
// behind. Async-signal-safe (a table of fixed blocks and unlink()): meant
// for a signal handler that then ends the process (batch/interrupt.hpp);
// the interrupted writes must not continue afterwards.
void remove_pending_temp_files() noexcept;

}  // namespace cudaconv
