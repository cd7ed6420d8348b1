// Reading images: the bytes first (so every failure has a plain cause),
// then a look at their structure and the size they claim, which the
// options' checks weigh, then the decoder (PNG's own, else OpenCV's with
// its chatter on stderr kept for the error message); plus the small cv::Mat
// adapters.
#include "io/image_io.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <system_error>

#include <opencv2/core/utils/logger.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "base/errors.hpp"
#include "io/codec_messages.hpp"
#include "io/exif_orientation.hpp"
#include "io/image_block.hpp"
#include "io/memory_check.hpp"
#include "io/npy.hpp"
#include "io/format_probe.hpp"
#include "io/png_reader.hpp"

namespace cudaconv {
namespace {

constexpr const char* kStdinName = "<stdin>";
constexpr std::size_t kReadChunk = std::size_t{1} << 20;

std::string errno_text(int err) { return std::generic_category().message(err); }

std::string open_problem(int err) {
    switch (err) {
        case ENOENT: return "no such file";
        case ENOTDIR: return "no such file (a part of the path is not a folder)";
        case EISDIR: return "is a directory, not an image";
        case EACCES:
        case EPERM: return "permission denied";
        default: return "cannot open: " + errno_text(err);
    }
}

class FileDescriptor {
public:
    explicit FileDescriptor(int fd) : fd_(fd) {}
    ~FileDescriptor() {
        if (fd_ >= 0) ::close(fd_);
    }
    FileDescriptor(const FileDescriptor&) = delete;
    FileDescriptor& operator=(const FileDescriptor&) = delete;
    int get() const { return fd_; }

private:
    int fd_;
};

WorkError not_an_image(const std::string& name) {
    return WorkError(name + ": not an image (unknown format; cudaconv reads " +
                     detail::kReadableFormats + ")");
}

// Reads into bytes[used, bytes.size()), through EINTR and (for a
// non-blocking stdin) EAGAIN; 0 at the end of the data.
std::size_t read_some(int fd, const std::string& name, std::vector<std::uint8_t>& bytes,
                      std::size_t used) {
    for (;;) {
        const ssize_t n = ::read(fd, bytes.data() + used, bytes.size() - used);
        if (n >= 0) return static_cast<std::size_t>(n);
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            pollfd wait{fd, POLLIN, 0};
            ::poll(&wait, 1, -1);
            continue;
        }
        if (errno == EISDIR) throw WorkError(name + ": is a directory, not an image");
        throw WorkError(name + ": cannot read: " + errno_text(errno));
    }
}

// Makes room for `size` bytes, where the memory this process can get holds
// them: a file or stream too large for memory (a device such as /dev/zero,
// a pipe that never ends) ends in one line, not in the OOM killer. The
// system's figures are read only for a large buffer (they cost a few reads
// of /proc); a smaller one that cannot be had is named all the same.
void make_room(std::vector<std::uint8_t>& bytes, std::size_t size, const std::string& name) {
    constexpr std::size_t kWeighedFrom = std::size_t{64} << 20;
    // The bytes read so far are copied into the new buffer: both at once.
    const std::size_t needed = size + bytes.size();
    if (needed >= kWeighedFrom) {
        const std::string short_of = memory_shortfall(needed, read_memory_figures());
        if (!short_of.empty()) {
            throw WorkError(name + ": too large to read into memory: " + short_of);
        }
    }
    try {
        bytes.resize(size);
    } catch (const std::bad_alloc&) {
        throw WorkError(name + ": out of memory reading it (" + approximate_bytes(size) + ")");
    }
}

// Reads to the end. The first bytes are read alone and must name a format
// cudaconv reads (detail::sniff_format), so that bytes of no image are
// refused before the rest is read. `expected` is the size when known, so
// a file is read into one buffer.
std::vector<std::uint8_t> read_all(int fd, const std::string& name, std::size_t expected) {
    std::vector<std::uint8_t> bytes(detail::kSniffBytes);
    std::size_t used = 0;
    while (used < bytes.size()) {
        const std::size_t n = read_some(fd, name, bytes, used);
        if (n == 0) break;
        used += n;
    }
    if (used == 0) return {};
    if (detail::sniff_format(bytes.data(), used) == detail::ImageFormat::unknown) {
        throw not_an_image(name);
    }
    if (used < bytes.size()) {
        bytes.resize(used);
        return bytes;
    }
    make_room(bytes, std::max(expected, used) + 1, name);  // +1: room to see the end of file
    for (;;) {
        if (used == bytes.size()) make_room(bytes, used + std::max(kReadChunk, used / 2), name);
        const std::size_t n = read_some(fd, name, bytes, used);
        if (n == 0) break;
        used += n;
    }
    bytes.resize(used);
    return bytes;
}

std::vector<std::uint8_t> read_file(const std::string& path) {
    const FileDescriptor file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (file.get() < 0) throw WorkError(path + ": " + open_problem(errno));
    struct stat info {};
    if (::fstat(file.get(), &info) != 0) {
        throw WorkError(path + ": cannot read: " + errno_text(errno));
    }
    if (S_ISDIR(info.st_mode)) throw WorkError(path + ": is a directory, not an image");
    const std::size_t expected = S_ISREG(info.st_mode) ? static_cast<std::size_t>(info.st_size) : 0;
    return read_all(file.get(), path, expected);
}

std::string size_text(const detail::FormatProbe& probe) {
    if (probe.width <= 0 || probe.height <= 0) return "";
    return " (" + std::to_string(probe.width) + "x" + std::to_string(probe.height) + " pixels)";
}

// OpenCV refuses images beyond CV_IO_MAX_IMAGE_PIXELS (2^30 unless the
// environment says otherwise) and 2^20 per side, whatever --max-pixels
// allows: it reads the variables when its library loads, so they can only
// be set before cudaconv starts.
std::string too_large(const detail::FormatProbe& probe) {
    return "image too large" + size_text(probe) +
           ": OpenCV decodes at most 2^30 pixels and 2^20 per side"
           " (OPENCV_IO_MAX_IMAGE_PIXELS, _WIDTH and _HEIGHT raise the limits)";
}

bool contains(const std::string& text, const char* part) {
    return text.find(part) != std::string::npos;
}

// libjpeg decodes damaged data with only a warning on stderr, of which it
// prints the first. "Extraneous bytes before marker" loses no pixels (the
// decoder skips the junk between segments, common in camera files); the
// others mean the picture is partly made up.
bool jpeg_lost_data(const std::string& messages) {
    if (contains(messages, "Premature end of JPEG file")) return true;
    return contains(messages, "Corrupt JPEG data") && !contains(messages, "extraneous bytes");
}

std::string depth_text(int cv_depth) {
    switch (cv_depth) {
        case CV_8U: return "8-bit unsigned integer";
        case CV_8S: return "8-bit signed integer";
        case CV_16U: return "16-bit unsigned integer";
        case CV_16S: return "16-bit signed integer";
        case CV_32S: return "32-bit signed integer";
        case CV_32F: return "32-bit float";
        case CV_64F: return "64-bit float";
        case CV_16F: return "16-bit float";
        default: return "unknown";
    }
}

void check_decoded(const cv::Mat& image, const std::string& name) {
    const int depth = image.depth();
    if (depth != CV_8U && depth != CV_16U && depth != CV_32F) {
        throw WorkError(name + ": unsupported sample type " + depth_text(depth) +
                        " (cudaconv reads 8- and 16-bit unsigned integers and 32-bit floats)");
    }
    const int channels = image.channels();
    if (channels != 1 && channels != 3 && channels != 4) {
        throw WorkError(name + ": unsupported channel count " + std::to_string(channels) +
                        " (cudaconv reads 1, 3 or 4 channels)");
    }
}

// `image` turned upright from its EXIF `orientation` (a new Mat unless
// kUpright), as OpenCV's ExifTransform turns it.
cv::Mat upright(const cv::Mat& image, int orientation) {
    cv::Mat out;
    switch (orientation) {
        case 2: cv::flip(image, out, 1); break;
        case 3: cv::rotate(image, out, cv::ROTATE_180); break;
        case 4: cv::flip(image, out, 0); break;
        case 5: cv::transpose(image, out); break;
        case 6: cv::rotate(image, out, cv::ROTATE_90_CLOCKWISE); break;
        case 7: {
            cv::Mat turned;
            cv::transpose(image, turned);
            cv::flip(turned, out, -1);
            break;
        }
        case 8: cv::rotate(image, out, cv::ROTATE_90_COUNTERCLOCKWISE); break;
        default: return image;
    }
    return out;
}

// The shape the header tells, turned as the decoded image will be.
ImageShape claimed_shape(const detail::FormatProbe& probe, const ReadOptions& options) {
    const bool swapped = options.auto_orient && swaps_sides(probe.orientation);
    return {swapped ? probe.height : probe.width, swapped ? probe.width : probe.height,
            probe.channels, probe.sample_bytes, probe.pixel_bytes};
}

// What the bytes claim to be, checked as far as the header tells: a
// problem the probe found, then (other than PNG, whose reader checks its
// own header as it goes) the size the header claims against the options.
detail::FormatProbe checked_probe(const std::vector<std::uint8_t>& bytes, const std::string& name,
                                  const ReadOptions& options) {
    detail::FormatProbe probe = detail::probe_image(bytes.data(), bytes.size());
    if (!probe.problem.empty()) throw WorkError(name + ": " + probe.problem);
    if (probe.format != detail::ImageFormat::png && probe.width > 0 && probe.height > 0) {
        check_shape(claimed_shape(probe, options), name, options);
        if (options.accepted) options.accepted(claimed_shape(probe, options));
    }
    return probe;
}

// `path` is empty for stdin: the bytes are all there is. `probe` is
// checked_probe's, which has run.
// A NumPy array (io/npy.hpp) as a float32 image: (H, W) is one channel,
// (H, W, C) C channels, 1, 3 or 4, the samples as they are; 3 or 4 channels
// are RGB(A), as NumPy's image libraries hold them, made BGR(A).
cv::Mat decode_npy(const std::vector<std::uint8_t>& bytes, const std::string& name) {
    NpyHeader header;
    try {
        header = read_npy_header(bytes.data(), bytes.size());
        check_npy_data(header, bytes.size());
    } catch (const std::invalid_argument& e) {
        throw WorkError(name + ": cannot decode NPY data: " + e.what());
    }
    const std::size_t needed = header.samples * sizeof(float);
    const std::int64_t channels = header.shape.size() == 3 ? header.shape[2] : 1;
    if (channels != 1 && channels != 3 && channels != 4) {
        throw WorkError(name + ": an array of " + std::to_string(channels) +
                        " channels (cudaconv reads 1, 3 or 4 channels)");
    }
    constexpr std::int64_t kLargestSide = std::numeric_limits<int>::max();
    if (header.shape[0] > kLargestSide || header.shape[1] > kLargestSide) {
        throw WorkError(name + ": a side past " + std::to_string(kLargestSide) + " samples");
    }
    try {
        cv::Mat image(static_cast<int>(header.shape[0]), static_cast<int>(header.shape[1]),
                      CV_32FC(static_cast<int>(channels)));
        std::memcpy(image.data, bytes.data() + header.data_offset, needed);
        // NumPy's colours are RGB(A); cudaconv's, as OpenCV's, BGR(A).
        if (channels == 3) cv::cvtColor(image, image, cv::COLOR_RGB2BGR);
        if (channels == 4) cv::cvtColor(image, image, cv::COLOR_RGBA2BGRA);
        return image;
    } catch (const std::bad_alloc&) {
        throw WorkError(name + ": out of memory decoding NPY data");
    } catch (const cv::Exception& e) {
        if (is_out_of_memory(e)) throw WorkError(name + ": out of memory decoding NPY data");
        throw;
    }
}

cv::Mat decode(const std::vector<std::uint8_t>& bytes, const detail::FormatProbe& probe,
               const std::string& path, const std::string& name, const ReadOptions& options) {
    if (probe.format == detail::ImageFormat::png) {
        return decode_png(bytes.data(), bytes.size(), name, options);
    }
    if (probe.format == detail::ImageFormat::npy) return decode_npy(bytes, name);
    const std::string format = detail::format_name(probe.format);
    const bool size_told = probe.width > 0 && probe.height > 0;

    detail::CodecMessages messages;
    cv::Mat image;
    const auto out_of_memory_decoding = [&] {
        if (size_told) return out_of_memory(name, claimed_shape(probe, options), options);
        return WorkError(name + ": out of memory decoding " + format + " data");
    };
    try {
        if (!path.empty() && detail::decodes_from_file_only(probe.format)) {
            // Spares OpenCV copying the whole file into a temporary one.
            image = cv::imread(path, cv::IMREAD_UNCHANGED);
        } else {
            // imdecode takes the bytes as a 1-row Mat, so an int counts them.
            if (bytes.size() > static_cast<std::size_t>(INT_MAX)) {
                throw WorkError(name + ": " + format + " data over 2 GiB cannot be decoded");
            }
            // Decoded into a block with room to spare (io/image_block.hpp)
            // where the header tells the decoded type; OpenCV reuses a
            // destination of the right size and type.
            if (probe.format == detail::ImageFormat::jpeg && size_told && probe.channels > 0 &&
                probe.sample_bytes == 1) {
                image = image_with_slack(static_cast<int>(probe.height),
                                         static_cast<int>(probe.width), CV_8UC(probe.channels));
                const cv::Mat decoded = cv::imdecode(bytes, cv::IMREAD_UNCHANGED, &image);
                image = decoded;
            } else {
                image = cv::imdecode(bytes, cv::IMREAD_UNCHANGED);
            }
        }
    } catch (const cv::Exception& e) {
        if (is_out_of_memory(e)) throw out_of_memory_decoding();
        if (contains(e.err, "CV_IO_MAX_IMAGE")) {
            throw WorkError(name + ": " + too_large(probe));
        }
        throw WorkError(name + ": cannot decode " + format + " data: " + detail::one_line(e.err));
    } catch (const std::bad_alloc&) {
        throw out_of_memory_decoding();
    }

    const std::string said = messages.summary();
    const std::string because = said.empty() ? "" : " (" + said + ")";
    if (image.empty()) {
        if (probe.format == detail::ImageFormat::unknown) {
            throw not_an_image(name);
        }
        throw WorkError(name + ": truncated or corrupt " + format + " data" + because);
    }
    if (probe.format == detail::ImageFormat::jpeg && jpeg_lost_data(messages.text())) {
        throw WorkError(name + ": truncated or corrupt JPEG data" + because);
    }
    check_decoded(image, name);
    if (!size_told) check_shape(shape_of(image), name, options, true);
    return image;
}

}  // namespace

void configure_opencv_io() {
    static std::once_flag once;
    std::call_once(once, [] {
        cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT);
        // OpenCV reads this once, at the first EXR it meets (grfmt_exr.cpp).
        ::setenv("OPENCV_IO_ENABLE_OPENEXR", "1", 1);
        detail::install_codec_message_capture();
    });
}

cv::Mat read_image(const std::string& path, const ReadOptions& options) {
    return decode_image(read_encoded_image(path, options), options);
}

std::vector<std::uint8_t> read_file_head(const std::string& path) {
    constexpr std::size_t kHeadBytes = 256 * 1024;
    if (path == kStdStream) return {};
    // A pipe, a FIFO or a device is read once: a look ahead would take the
    // bytes the decode needs (`cudaconv <(cat a.png)` read "empty file").
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return {};
    std::ifstream file(path, std::ios::binary);
    std::vector<std::uint8_t> head(kHeadBytes);
    file.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<std::size_t>(std::max<std::streamsize>(file.gcount(), 0)));
    return head;
}

EncodedImage read_encoded_image(const std::string& path, const ReadOptions& options) {
    EncodedImage image;
    if (path == kStdStream) {
        image.name = kStdinName;
        image.bytes = read_all(STDIN_FILENO, kStdinName, 0);
        if (image.bytes.empty()) throw WorkError(image.name + ": empty input");
    } else {
        image.name = image.path = path;
        image.bytes = read_file(path);
        if (image.bytes.empty()) throw WorkError(path + ": empty file");
    }
    const detail::FormatProbe probe = checked_probe(image.bytes, image.name, options);
    image.is_jpeg = probe.format == detail::ImageFormat::jpeg;
    image.orientation = options.auto_orient ? probe.orientation : kUpright;
    return image;
}

cv::Mat decode_image(const EncodedImage& image, const ReadOptions& options) {
    // Probed again (a look at the header, microseconds) rather than kept:
    // EncodedImage stays free of the probe's detail.
    const detail::FormatProbe probe = detail::probe_image(image.bytes.data(), image.bytes.size());
    cv::Mat decoded = decode(image.bytes, probe, image.path, image.name, options);
    if (!options.auto_orient || probe.orientation == kUpright) return decoded;
    try {
        return upright(decoded, probe.orientation);
    } catch (const cv::Exception& e) {
        if (is_out_of_memory(e))
            throw out_of_memory(image.name, claimed_shape(probe, options), options);
        throw;
    } catch (const std::bad_alloc&) {
        throw out_of_memory(image.name, claimed_shape(probe, options), options);
    }
}

Depth depth_of(const cv::Mat& m) {
    switch (m.depth()) {
        case CV_8U: return Depth::u8;
        case CV_16U: return Depth::u16;
        case CV_32F: return Depth::f32;
        default: throw std::invalid_argument("depth_of: " + depth_text(m.depth()) + " samples");
    }
}

int cv_type_of(Depth depth, int channels) {
    const int cv_depth = depth == Depth::u8 ? CV_8U : depth == Depth::u16 ? CV_16U : CV_32F;
    return CV_MAKETYPE(cv_depth, channels);
}

ImageView view_of(cv::Mat& m) {
    return {reinterpret_cast<std::byte*>(m.data), m.cols, m.rows, m.channels(), depth_of(m),
            static_cast<std::int64_t>(m.step[0])};
}

ConstImageView view_of(const cv::Mat& m) {
    return {reinterpret_cast<const std::byte*>(m.data), m.cols, m.rows, m.channels(), depth_of(m),
            static_cast<std::int64_t>(m.step[0])};
}

std::string extension_of(const std::string& path) {
    const std::size_t slash = path.find_last_of('/');
    const std::size_t base = slash == std::string::npos ? 0 : slash + 1;
    const std::size_t dot = path.find_last_of('.');
    // ".bashrc" is a name, not an extension; "x." has none either.
    if (dot == std::string::npos || dot <= base || dot + 1 == path.size()) return "";
    std::string ext = path.substr(dot);
    for (char& c : ext) {
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    return ext;
}

}  // namespace cudaconv
