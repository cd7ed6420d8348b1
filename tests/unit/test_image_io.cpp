// Image I/O on real files made in a temporary folder: every format, depth
// and channel count cudaconv accepts round-trips (exactly, JPEG within its
// loss) and every one it refuses is one OpenCV would fail or alter; every
// way an input can be broken gives one "PATH: problem" message and nothing
// else on stderr; outputs are written atomically.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "base/errors.hpp"
#include "io/codec_messages.hpp"
#include "io/format_probe.hpp"
#include "io/image_io.hpp"
#include "support/random_image.hpp"
#include "support/scoped_env.hpp"
#include "support/source_dir.hpp"

namespace cudaconv {
namespace {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using Bytes = std::vector<std::uint8_t>;

// A fresh folder per test case, removed with everything in it.
class TempFolder {
public:
    TempFolder() {
        configure_opencv_io();
        std::string pattern = (fs::temp_directory_path() / "cudaconv-io-XXXXXX").string();
        REQUIRE(::mkdtemp(pattern.data()) != nullptr);
        path_ = pattern;
    }
    ~TempFolder() {
        std::error_code ignored;
        fs::remove_all(path_, ignored);
    }
    TempFolder(const TempFolder&) = delete;
    TempFolder& operator=(const TempFolder&) = delete;

    std::string operator/(const std::string& name) const { return (path_ / name).string(); }

    // The names of the temporary files write_file_atomically left behind.
    std::vector<std::string> leftovers() const {
        std::vector<std::string> found;
        for (const auto& entry : fs::recursive_directory_iterator(path_)) {
            const std::string name = entry.path().filename().string();
            if (name.find(".cudaconv-") != std::string::npos) found.push_back(name);
        }
        return found;
    }

private:
    fs::path path_;
};

Bytes file_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return Bytes(std::istreambuf_iterator<char>(in), {});
}

void write_bytes(const std::string& path, const Bytes& bytes) {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    REQUIRE(out.good());
}

Bytes opencv_encoded(const cv::Mat& image, const std::string& extension) {
    Bytes bytes;
    REQUIRE(cv::imencode(extension, image, bytes));
    return bytes;
}

Bytes head(const Bytes& bytes, std::size_t size) {
    return Bytes(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(size));
}

// JPEG needs a picture it can compress well for a tight tolerance; noise
// makes its error large.
cv::Mat smooth_image(int width, int height, int type) {
    const int depth = CV_MAT_DEPTH(type), channels = CV_MAT_CN(type);
    const double top = depth == CV_8U ? 255 : depth == CV_16U ? 65535 : 1;
    cv::Mat wave(height, width, CV_64FC(channels));
    for (int y = 0; y < height; ++y) {
        double* row = wave.ptr<double>(y);
        for (int i = 0; i < width * channels; ++i) {
            row[i] = top * (0.5 + 0.4 * std::sin(0.11 * (i / channels) + 0.07 * y + i % channels));
        }
    }
    cv::Mat image;
    wave.convertTo(image, type);
    return image;
}

bool is_jpeg(const std::string& extension) {
    return extension == ".jpg" || extension == ".jpeg" || extension == ".jpe";
}

// JPEG at quality 95 on a smooth picture: a few levels on average, more
// here and there where 4:2:0 chroma subsampling blurs colour edges.
constexpr double kJpegTolerance = 12;
constexpr double kJpegMeanTolerance = 1.5;

// Whether OpenCV alone, with its default settings, gives back what it was
// given: the evidence that a refused combination deserved refusing.
bool opencv_keeps(const cv::Mat& image, const std::string& extension) {
    Bytes bytes;
    try {
        if (!cv::imencode(extension, image, bytes)) return false;
    } catch (const cv::Exception&) {
        return false;
    }
    const cv::Mat back = cv::imdecode(bytes, cv::IMREAD_UNCHANGED);
    if (back.empty() || back.type() != image.type()) return false;
    return cv::norm(back, image, cv::NORM_INF) <= (is_jpeg(extension) ? kJpegTolerance : 0);
}

// fd 2 goes to a file while this is alive: whatever leaked to stderr.
class StderrLeak {
public:
    explicit StderrLeak(const std::string& file) : file_(file) {
        std::fflush(stderr);
        saved_ = ::dup(2);
        const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        ::dup2(fd, 2);
        ::close(fd);
    }
    ~StderrLeak() { restore(); }
    StderrLeak(const StderrLeak&) = delete;
    StderrLeak& operator=(const StderrLeak&) = delete;

    std::string text() {
        restore();
        const Bytes bytes = file_bytes(file_);
        return std::string(bytes.begin(), bytes.end());
    }

private:
    void restore() {
        if (saved_ < 0) return;
        std::fflush(stderr);
        ::dup2(saved_, 2);
        ::close(saved_);
        saved_ = -1;
    }
    std::string file_;
    int saved_ = -1;
};

// The message read_image fails with; checks that nothing else was printed.
std::string read_failure_with(const TempFolder& dir, const std::string& path,
                              const ReadOptions& options) {
    StderrLeak leak(dir / "stderr.txt");
    std::string message = "(no exception)";
    try {
        read_image(path, options);
    } catch (const WorkError& e) {
        message = e.what();
    }
    const std::string printed = leak.text();
    INFO("reading " << path << " printed: " << printed);
    CHECK(printed.empty());
    return message;
}

std::string read_failure(const TempFolder& dir, const std::string& path) {
    return read_failure_with(dir, path, {});
}

std::string read_failure(const TempFolder& dir, const std::string& name, const Bytes& bytes) {
    write_bytes(dir / name, bytes);
    return read_failure(dir, dir / name);
}

void put16(Bytes& out, std::uint32_t v) {
    out.push_back(static_cast<std::uint8_t>(v));
    out.push_back(static_cast<std::uint8_t>(v >> 8));
}
void put32(Bytes& out, std::uint32_t v) {
    put16(out, v & 0xFFFF);
    put16(out, v >> 16);
}

// An uncompressed one-strip little-endian TIFF with any sample layout, for
// the layouts OpenCV cannot write: 2 or 5 channels, 32-bit unsigned,
// 16-bit float, 3-channel 64-bit float.
Bytes handmade_tiff(int width, int height, int channels, int bits, int sample_format) {
    struct Entry {
        std::uint16_t tag;
        std::uint16_t type;  // 3 SHORT, 4 LONG
        std::vector<std::uint32_t> values;
    };
    const auto each = [channels](std::uint32_t v) {
        return std::vector<std::uint32_t>(channels, v);
    };
    const std::uint32_t photometric = channels >= 3 ? 2 : 1;  // RGB or grey
    const int extra = channels - (photometric == 2 ? 3 : 1);
    const auto w = static_cast<std::uint32_t>(width), h = static_cast<std::uint32_t>(height);
    const std::uint32_t pixel_bytes = w * h * static_cast<std::uint32_t>(channels * bits / 8);

    std::vector<Entry> entries = {{256, 3, {w}},
                                  {257, 3, {h}},
                                  {258, 3, each(bits)},
                                  {259, 3, {1}},
                                  {262, 3, {photometric}},
                                  {273, 4, {0}},
                                  {277, 3, {static_cast<std::uint32_t>(channels)}},
                                  {278, 3, {h}},
                                  {279, 4, {pixel_bytes}},
                                  {284, 3, {1}}};
    if (extra > 0) entries.push_back({338, 3, std::vector<std::uint32_t>(extra, 0)});
    entries.push_back({339, 3, each(static_cast<std::uint32_t>(sample_format))});

    // Header, directory, pixels, then the value arrays too long to inline.
    const std::uint32_t pixels_at = 8 + 2 + 12 * static_cast<std::uint32_t>(entries.size()) + 4;
    entries[5].values[0] = pixels_at;
    Bytes out = {'I', 'I', 42, 0};
    put32(out, 8);
    put16(out, static_cast<std::uint32_t>(entries.size()));
    Bytes arrays;
    std::uint32_t arrays_at = pixels_at + pixel_bytes;
    for (const Entry& e : entries) {
        put16(out, e.tag);
        put16(out, e.type);
        put32(out, static_cast<std::uint32_t>(e.values.size()));
        const std::size_t size = e.values.size() * (e.type == 3 ? 2 : 4);
        Bytes values;
        for (std::uint32_t v : e.values) e.type == 3 ? put16(values, v) : put32(values, v);
        if (size <= 4) {
            values.resize(4, 0);
            out.insert(out.end(), values.begin(), values.end());
        } else {
            put32(out, arrays_at + static_cast<std::uint32_t>(arrays.size()));
            arrays.insert(arrays.end(), values.begin(), values.end());
        }
    }
    put32(out, 0);  // no next directory
    out.resize(out.size() + pixel_bytes, 0);
    out.insert(out.end(), arrays.begin(), arrays.end());
    return out;
}

// The CRC-32 of PNG chunks (ISO 3309), bit by bit: only for test files.
std::uint32_t png_crc(const std::uint8_t* data, std::size_t size) {
    std::uint32_t crc = 0xFFFFFFFF;
    for (std::size_t i = 0; i < size; ++i) {
        crc ^= data[i];
        for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320 & (0 - (crc & 1)));
    }
    return ~crc;
}

// A valid PNG whose header claims another size (its data stays as it was).
Bytes png_claiming(const Bytes& png, std::uint32_t width, std::uint32_t height) {
    Bytes out = png;
    const auto put_be32 = [&out](std::size_t at, std::uint32_t v) {
        for (int i = 0; i < 4; ++i) out[at + i] = static_cast<std::uint8_t>(v >> (24 - 8 * i));
    };
    put_be32(16, width);  // IHDR data starts at 16: signature 8, length 4, type 4
    put_be32(20, height);
    put_be32(29, png_crc(out.data() + 12, 17));  // over type and the 13 data bytes
    return out;
}

}  // namespace

TEST_CASE("extension_of is the last suffix of the file name, lower-case", "[io]") {
    CHECK(extension_of("photo.JPG") == ".jpg");
    CHECK(extension_of("out/a.b.TIFF") == ".tiff");
    CHECK(extension_of("/abs/x.jpeg") == ".jpeg");
    CHECK(extension_of("archive.tar.gz") == ".gz");
    CHECK(extension_of("a.b/c").empty());  // the dot belongs to the folder
    CHECK(extension_of("./c").empty());
    CHECK(extension_of(".hidden").empty());
    CHECK(extension_of("dir/.hidden").empty());
    CHECK(extension_of("trailing.").empty());
    CHECK(extension_of("plain").empty());
    CHECK(extension_of("-").empty());
    CHECK(extension_of("").empty());
}

TEST_CASE("cv::Mat adapters keep the layout, strides of ROIs included", "[io]") {
    CHECK(cv_type_of(Depth::u8, 1) == CV_8UC1);
    CHECK(cv_type_of(Depth::u16, 3) == CV_16UC3);
    CHECK(cv_type_of(Depth::f32, 4) == CV_32FC4);

    cv::Mat whole(10, 20, CV_16UC3, cv::Scalar::all(7));
    cv::Mat roi = whole(cv::Rect(2, 3, 5, 4));
    const ImageView view = view_of(roi);
    CHECK(view.data == reinterpret_cast<std::byte*>(roi.data));
    CHECK(view.width == 5);
    CHECK(view.height == 4);
    CHECK(view.channels == 3);
    CHECK(view.depth == Depth::u16);
    CHECK(view.row_bytes == 20 * 3 * 2);

    const cv::Mat& constant = whole;
    const ConstImageView const_view = view_of(constant);
    CHECK(const_view.row_bytes == static_cast<std::int64_t>(whole.step[0]));
    CHECK(const_view.depth == Depth::u16);
    CHECK(depth_of(cv::Mat(1, 1, CV_8UC4)) == Depth::u8);
    CHECK(depth_of(cv::Mat(1, 1, CV_32FC1)) == Depth::f32);
    CHECK_THROWS(depth_of(cv::Mat(1, 1, CV_16SC1)));
}

// The portable build for the GPU machine links an OpenCV with JPEG and PNG
// only; tests of the other codecs say so and stop there.
bool skip_without_codec(const std::string& extension) {
    if (cv::haveImageWriter("x" + extension)) return false;
    std::cout << "SKIPPED: this OpenCV has no " << extension << " codec\n";
    return true;
}

TEST_CASE("each output format holds exactly what it accepts", "[io]") {
    const std::string extension = GENERATE(as<std::string>{}, ".png", ".jpg", ".jpeg", ".jpe",
                                           ".tif", ".tiff", ".exr", ".pfm", ".bmp", ".webp", ".ppm",
                                           ".pgm", ".pnm");
    const Depth depth = GENERATE(Depth::u8, Depth::u16, Depth::f32);
    const int channels = GENERATE(1, 3, 4);
    CAPTURE(extension, depth_name(depth), channels);
    if (skip_without_codec(extension)) return;
    TempFolder dir;
    const std::string path = dir / ("out" + extension);
    const int type = cv_type_of(depth, channels);
    // Odd sizes, so no row is accidentally aligned.
    const cv::Mat image = is_jpeg(extension) ? smooth_image(37, 23, type)
                                             : test::random_image(37, 23, type, 20240611);

    bool accepted = true;
    try {
        check_output_format(path, extension, depth, channels);
    } catch (const UsageError& e) {
        accepted = false;
        CHECK_THAT(e.what(), StartsWith(path + ": "));
    }

    if (!accepted) {
        // OpenCV encodes some formats through a temporary file of its own,
        // which it leaves behind when the encoder refuses the image.
        const std::string opencv_temp_dir = dir / "";
        const test::ScopedEnv opencv_temp("OPENCV_TEMP_PATH", opencv_temp_dir.c_str());
        CHECK_FALSE(opencv_keeps(image, extension));
        if (is_jpeg(extension) && depth != Depth::f32) {
            // encode_image converts RGBA and u16 for JPEG (io/jpeg_fit.hpp).
            const cv::Mat back =
                cv::imdecode(encode_image(image, extension, {}, path), cv::IMREAD_UNCHANGED);
            CHECK(back.depth() == CV_8U);
            CHECK(back.channels() == (channels == 4 ? 3 : channels));
            return;
        }
        CHECK_THROWS_AS(encode_image(image, extension, {}, path), UsageError);
        return;
    }
    write_file_atomically(path, encode_image(image, extension, {}, path));
    const cv::Mat back = read_image(path);
    if (extension == ".webp" && channels == 1) {
        // WebP has no grayscale: OpenCV stores 3 equal channels.
        cv::Mat expected;
        cv::cvtColor(image, expected, cv::COLOR_GRAY2BGR);
        REQUIRE(back.type() == expected.type());
        CHECK(cv::norm(back, expected, cv::NORM_INF) == 0);
        return;
    }
    REQUIRE(back.type() == image.type());
    REQUIRE(back.size() == image.size());
    CHECK(cv::norm(back, image, cv::NORM_INF) <= (is_jpeg(extension) ? kJpegTolerance : 0));
    if (is_jpeg(extension)) {
        CHECK(cv::norm(back, image, cv::NORM_L1) / static_cast<double>(image.total() * channels) <=
              kJpegMeanTolerance);
    }
}

TEST_CASE("check_output_format says what would work instead", "[io]") {
    if (skip_without_codec(".tif") || skip_without_codec(".exr")) return;
    CHECK_THROWS_WITH(
        check_output_format("out.png", ".png", Depth::f32, 3),
        "out.png: PNG holds 8- or 16-bit samples; write f32 to .tif, .exr, .pfm or .npy, "
        "or choose --depth u8|u16");
    CHECK_THROWS_WITH(check_output_format("out.png", ".png", Depth::f32, 4),
                      Contains("write f32 to .tif, .exr or .npy,"));
    CHECK_THROWS_WITH(check_output_format("a.jpg", ".jpg", Depth::u16, 3),
                      "a.jpg: JPEG holds 8-bit samples; write u16 to .png, .tif, .ppm or .pnm, "
                      "or choose --depth u8");
    CHECK_THROWS_WITH(check_output_format("a.jpeg", ".jpeg", Depth::u8, 4),
                      "a.jpeg: JPEG has no alpha channel; write 4-channel u8 images to .png, .tif "
                      "or .webp");
    CHECK_THROWS_WITH(check_output_format("a.exr", ".exr", Depth::u8, 1),
                      StartsWith("a.exr: OpenEXR holds 32-bit float samples;") &&
                          Contains("or choose --depth f32"));
    CHECK_THROWS_WITH(
        check_output_format("a.pfm", ".pfm", Depth::f32, 4),
        "a.pfm: PFM has no alpha channel; write 4-channel f32 images to .tif, .exr or .npy");
    CHECK_THROWS_WITH(
        check_output_format("a.ppm", ".ppm", Depth::u8, 1),
        StartsWith("a.ppm: PPM holds 3 channels; write 1-channel u8 images to .png,"));
    CHECK_THROWS_WITH(check_output_format("a.pgm", ".pgm", Depth::u16, 3),
                      StartsWith("a.pgm: PGM holds 1 channel;"));
    CHECK_THROWS_WITH(check_output_format("-", ".png", Depth::f32, 1),
                      StartsWith("<stdout>: PNG holds"));
    CHECK_THROWS_WITH(
        check_output_format("x.gif", ".gif", Depth::u8, 3),
        StartsWith("x.gif: unknown output format \".gif\"; cudaconv writes .png, .jpg, "
                   ".jpeg, .jpe, .tif, .tiff, .exr, .pfm"));
    CHECK_THROWS_WITH(
        check_output_format("out", "", Depth::u8, 3),
        StartsWith("out: no extension to tell the output format; cudaconv writes .png"));
    CHECK_THROWS_WITH(check_output_format("a.png", ".png", Depth::u8, 2),
                      "a.png: cudaconv writes 1, 3 or 4 channels, not 2");
    CHECK_THROWS_AS(check_output_format("a.png", ".png", Depth::f32, 1), UsageError);
    CHECK_NOTHROW(check_output_format("a.TIF", ".tif", Depth::f32, 3));
}

TEST_CASE("check_output_format before decoding checks only what is known", "[io]") {
    // --depth same: a float input may go to .pfm, whatever it turns out to be.
    CHECK_NOTHROW(check_output_format("a.pfm", ".pfm", std::nullopt, kChannelsUnknown));
    CHECK_NOTHROW(check_output_format("a.png", ".png", std::nullopt, kChannelsUnknown));
    // A colour-only format with a known depth waits for the channel count.
    CHECK_NOTHROW(check_output_format("a.ppm", ".ppm", Depth::u8, kChannelsUnknown));
    CHECK_THROWS_WITH(check_output_format("a.png", ".png", Depth::f32, kChannelsUnknown),
                      Contains("PNG holds 8- or 16-bit samples"));
    CHECK_THROWS_AS(check_output_format("a.xyz", ".xyz", std::nullopt, kChannelsUnknown),
                    UsageError);
}

TEST_CASE("encode_image applies the options and names the path on failure", "[io]") {
    configure_opencv_io();
    const cv::Mat image = smooth_image(64, 48, CV_8UC3);
    EncodeOptions low;
    low.jpeg.quality = 10;
    EncodeOptions high;
    high.jpeg.quality = 100;
    CHECK(encode_image(image, ".jpg", low, "a.jpg").size() <
          encode_image(image, ".jpg", high, "a.jpg").size());

    const cv::Mat noise = test::random_image(64, 48, CV_8UC3, 7);
    EncodeOptions stored;
    stored.png_level = 0;
    EncodeOptions squeezed;
    squeezed.png_level = 9;
    const cv::Mat flat(64, 48, CV_8UC3, cv::Scalar(1, 2, 3));
    CHECK(encode_image(flat, ".png", squeezed, "a.png").size() <
          encode_image(flat, ".png", stored, "a.png").size());
    CHECK(encode_image(noise, ".png", stored, "a.png").size() > 64 * 48 * 3);

    CHECK_THROWS_WITH(encode_image(cv::Mat(), ".png", {}, "out/a.png"),
                      "out/a.png: cannot encode an empty image");
    CHECK_THROWS_AS(encode_image(image, ".gif", {}, "a.gif"), UsageError);
}

TEST_CASE("read_image reads by content and tolerates bytes after the image", "[io]") {
    TempFolder dir;
    const cv::Mat image = test::random_image(31, 17, CV_16UC4, 3);
    write_bytes(dir / "really-a-png.jpg", opencv_encoded(image, ".png"));
    CHECK(cv::norm(read_image(dir / "really-a-png.jpg"), image, cv::NORM_INF) == 0);

    // Some cameras pad JPEGs after the end-of-image marker.
    Bytes jpeg = opencv_encoded(smooth_image(31, 17, CV_8UC3), ".jpg");
    jpeg.insert(jpeg.end(), 100, 0);
    write_bytes(dir / "padded.jpg", jpeg);
    CHECK(read_image(dir / "padded.jpg").type() == CV_8UC3);

    // Progressive scans and restart markers: the structure check follows them.
    const cv::Mat photo = smooth_image(64, 40, CV_8UC3);
    for (const std::vector<int>& settings :
         {std::vector<int>{cv::IMWRITE_JPEG_PROGRESSIVE, 1}, {cv::IMWRITE_JPEG_RST_INTERVAL, 1}}) {
        Bytes bytes;
        REQUIRE(cv::imencode(".jpg", photo, bytes, settings));
        write_bytes(dir / "variant.jpg", bytes);
        CHECK(read_image(dir / "variant.jpg").size() == photo.size());
        write_bytes(dir / "variant.jpg", head(bytes, bytes.size() * 3 / 4));
        CHECK_THROWS_WITH(read_image(dir / "variant.jpg"), Contains("truncated JPEG"));
    }

    // Named without its extension, grey, and through a folder with a dot.
    fs::create_directory(dir / "a.b");
    write_bytes(dir / "a.b/c", opencv_encoded(smooth_image(9, 5, CV_8UC1), ".jpg"));
    CHECK(read_image(dir / "a.b/c").type() == CV_8UC1);
}

// The header's guess at what OpenCV decodes a file into, which the single
// image's output is made from before the decode (batch/prefaulted_output.hpp).
constexpr std::array<std::uint8_t, 2> kBaselineFrame{0xFF, 0xC0};  // JPEG's SOF0 marker

TEST_CASE("the header predicts the type OpenCV decodes a JPEG or PNG into", "[io]") {
    const auto check_prediction = [](const Bytes& bytes, const std::string& what) {
        INFO(what);
        const detail::FormatProbe probe = detail::probe_image(bytes.data(), bytes.size());
        const cv::Mat decoded = cv::imdecode(bytes, cv::IMREAD_UNCHANGED);
        REQUIRE(!decoded.empty());
        CHECK(probe.width == decoded.cols);
        CHECK(probe.height == decoded.rows);
        CHECK(probe.channels == decoded.channels());
        CHECK(probe.sample_bytes == static_cast<int>(decoded.elemSize1()));
    };
    for (const int type : {CV_8UC1, CV_8UC3, CV_8UC4, CV_16UC1, CV_16UC3, CV_16UC4}) {
        const cv::Mat image = smooth_image(13, 7, type);
        check_prediction(opencv_encoded(image, ".png"), "PNG of type " + std::to_string(type));
        if (CV_MAT_DEPTH(type) == CV_8U && CV_MAT_CN(type) != 4) {
            check_prediction(opencv_encoded(image, ".jpg"), "JPEG of type " + std::to_string(type));
        }
    }
    for (const char* sample :
         {"rocket.jpg", "camera.png", "camera-16bit.png", "chelsea.png", "chelsea-alpha.png"}) {
        std::ifstream file(cudaconv::test::source_dir() / "images" / sample, std::ios::binary);
        const Bytes bytes{std::istreambuf_iterator<char>(file), {}};
        check_prediction(bytes, sample);
    }
    // Not told (a 12-bit JPEG, which this libjpeg does not decode): no guess
    // rather than a wrong one.
    Bytes jpeg = opencv_encoded(smooth_image(5, 3, CV_8UC3), ".jpg");
    const auto sof =
        std::search(jpeg.begin(), jpeg.end(), kBaselineFrame.begin(), kBaselineFrame.end());
    REQUIRE(sof != jpeg.end());
    sof[4] = 12;  // after FF C0 and the segment's length: the sample precision
    const detail::FormatProbe twelve_bit = detail::probe_image(jpeg.data(), jpeg.size());
    CHECK(twelve_bit.width == 5);
    CHECK(twelve_bit.channels == 0);
    CHECK(twelve_bit.sample_bytes == 0);
}

TEST_CASE("read_image names the file and the problem, and prints nothing else", "[io]") {
    TempFolder dir;
    const cv::Mat photo = smooth_image(96, 64, CV_8UC3);
    const Bytes jpeg = opencv_encoded(photo, ".jpg");
    const Bytes png = opencv_encoded(photo, ".png");

    SECTION("missing, a folder, empty, not an image") {
        CHECK(read_failure(dir, dir / "missing.png") == dir / "missing.png" + ": no such file");
        CHECK(read_failure(dir, dir / "missing/x.png") == dir / "missing/x.png" + ": no such file");
        fs::create_directory(dir / "folder.png");
        CHECK(read_failure(dir, dir / "folder.png") ==
              dir / "folder.png" + ": is a directory, not an image");
        CHECK(read_failure(dir, "empty.png", {}) == dir / "empty.png" + ": empty file");
        const std::string text = "just some words\n";
        CHECK(read_failure(dir, "notes.jpg", Bytes(text.begin(), text.end())) ==
              dir / "notes.jpg" + ": not an image (unknown format; cudaconv reads JPEG, PNG, TIFF, "
                                  "WebP, BMP, PBM/PGM/PPM/PAM, PFM, OpenEXR, Radiance HDR, JPEG "
                                  "2000, Sun raster and NumPy .npy (float32))");
    }
    SECTION("permission denied") {
        if (::geteuid() == 0) {
            WARN("running as root: permission bits do not stop reads, not tested");
            return;
        }
        write_bytes(dir / "locked.png", png);
        fs::permissions(dir / "locked.png", fs::perms::none);
        CHECK(read_failure(dir, dir / "locked.png") == dir / "locked.png" + ": permission denied");
    }
    SECTION("truncated JPEG: OpenCV alone returns a partial image for these") {
        CHECK(read_failure(dir, "half.jpg", head(jpeg, jpeg.size() / 2)) ==
              dir / "half.jpg" + ": truncated JPEG: the data stops before the end-of-image marker");
        CHECK_THAT(read_failure(dir, "no-eoi.jpg", head(jpeg, jpeg.size() - 2)),
                   Contains("truncated JPEG"));
        CHECK_THAT(read_failure(dir, "header-only.jpg", head(jpeg, 100)),
                   Contains("truncated JPEG"));
    }
    SECTION("damaged JPEG data: libjpeg only warns, on stderr") {
        // Cut in the middle but given back its end marker.
        Bytes spliced = head(jpeg, jpeg.size() / 2);
        spliced.insert(spliced.end(), {0xFF, 0xD9});
        CHECK(read_failure(dir, "spliced.jpg", spliced) ==
              dir / "spliced.jpg" +
                  ": truncated or corrupt JPEG data (libjpeg: premature end of data segment)");
        // A restart marker where none belongs.
        Bytes clobbered = jpeg;
        clobbered[jpeg.size() / 2] = 0xFF;
        clobbered[jpeg.size() / 2 + 1] = 0xD0;
        CHECK_THAT(
            read_failure(dir, "clobbered.jpg", clobbered),
            StartsWith(dir / "clobbered.jpg" + ": truncated or corrupt JPEG data (libjpeg: "));
    }
    SECTION("truncated or corrupt PNG") {
        CHECK(read_failure(dir, "half.png", head(png, png.size() / 2)) ==
              dir / "half.png" + ": truncated PNG: the data stops before the IEND chunk");
        Bytes flipped = png;
        flipped[png.size() / 2] ^= 0x55;
        CHECK(read_failure(dir, "flipped.png", flipped) ==
              dir / "flipped.png" + ": truncated or corrupt PNG data (libpng: IDAT: CRC error)");
    }
    SECTION("truncated files of the other formats") {
        if (skip_without_codec(".tif") || skip_without_codec(".exr") || skip_without_codec(".webp"))
            return;
        const cv::Mat f32 = test::random_image(96, 64, CV_32FC3, 5);
        const std::vector<std::pair<std::string, Bytes>> files = {
            {"cut.tif", opencv_encoded(photo, ".tif")},
            {"cut.webp", opencv_encoded(photo, ".webp")},
            {"cut.bmp", opencv_encoded(photo, ".bmp")},
            {"cut.ppm", opencv_encoded(photo, ".ppm")},
            {"cut.exr", opencv_encoded(f32, ".exr")},
            {"cut.pfm", opencv_encoded(f32, ".pfm")},
        };
        const std::vector<std::string> names = {"TIFF", "WebP", "BMP", "PNM", "OpenEXR", "PFM"};
        for (std::size_t i = 0; i < files.size(); ++i) {
            const auto& [name, bytes] = files[i];
            CAPTURE(name);
            CHECK_THAT(read_failure(dir, name, head(bytes, bytes.size() / 2)),
                       StartsWith(dir / name + ": truncated or corrupt " + names[i] + " data"));
        }
    }
    SECTION("more pixels than --max-pixels, OpenCV or the data allow") {
        CHECK_THAT(read_failure(dir, "huge.png", png_claiming(png, 100000, 100000)),
                   StartsWith(dir / "huge.png" + ": truncated PNG: its ") &&
                       Contains(" bytes of image data cannot hold 100000x100000 pixels (at "
                                "least 29069863 bytes)"));
        // A BMP's header, from which the size is told before decoding.
        Bytes bmp = opencv_encoded(photo, ".bmp");
        const auto claim = [&bmp](std::uint32_t width, std::uint32_t height) {
            for (int i = 0; i < 4; ++i) {
                bmp[18 + i] = static_cast<std::uint8_t>(width >> 8 * i);
                bmp[22 + i] = static_cast<std::uint8_t>(height >> 8 * i);
            }
            return bmp;
        };
        CHECK(read_failure(dir, "big.bmp", claim(20000, 20000)) ==
              dir / "big.bmp" +
                  ": 20000x20000 pixels is more than --max-pixels 268435456 (raise it, or 0 for "
                  "no limit)");
        ReadOptions no_limit;
        no_limit.max_pixels = 0;
        write_bytes(dir / "wide.bmp", claim(1100000, 1));
        CHECK_THAT(read_failure_with(dir, dir / "wide.bmp", no_limit),
                   StartsWith(dir / "wide.bmp" +
                              ": image too large (1100000x1 pixels): OpenCV decodes at most"));
    }
    SECTION("sample types cudaconv cannot filter, written by OpenCV") {
        if (skip_without_codec(".tif") || skip_without_codec(".exr") || skip_without_codec(".webp"))
            return;
        const std::vector<std::pair<int, std::string>> types = {
            {CV_8SC1, "8-bit signed integer"},
            {CV_16SC1, "16-bit signed integer"},
            {CV_32SC1, "32-bit signed integer"},
            {CV_64FC1, "64-bit float"},
        };
        for (const auto& [type, words] : types) {
            CAPTURE(words);
            cv::Mat image(8, 8, type, cv::Scalar::all(3));
            CHECK(read_failure(dir, "odd.tif", opencv_encoded(image, ".tif")) ==
                  dir / "odd.tif" + ": unsupported sample type " + words +
                      " (cudaconv reads 8- and 16-bit unsigned integers and 32-bit floats)");
        }
    }
    SECTION("sample types and channel counts OpenCV cannot write") {
        if (skip_without_codec(".tif") || skip_without_codec(".exr") || skip_without_codec(".webp"))
            return;
        CHECK_THAT(read_failure(dir, "u32.tif", handmade_tiff(8, 4, 1, 32, 1)),
                   Contains(": unsupported sample type 32-bit unsigned integer"));
        CHECK_THAT(read_failure(dir, "f16.tif", handmade_tiff(8, 4, 1, 16, 3)),
                   Contains(": unsupported sample type 16-bit float"));
        CHECK_THAT(read_failure(dir, "f64.tif", handmade_tiff(8, 4, 3, 64, 3)),
                   Contains(": unsupported sample type 64-bit float"));
        CHECK(read_failure(dir, "two.tif", handmade_tiff(8, 4, 2, 8, 1)) ==
              dir / "two.tif" +
                  ": unsupported channel count 2 (cudaconv reads 1, 3 or 4 channels)");
        CHECK_THAT(read_failure(dir, "five.tif", handmade_tiff(8, 4, 5, 16, 1)),
                   Contains(": unsupported channel count 5"));
        // The hand-made writer itself is sound: the same layout in 3 channels reads.
        write_bytes(dir / "three.tif", handmade_tiff(8, 4, 3, 16, 1));
        CHECK(read_image(dir / "three.tif").type() == CV_16UC3);
    }
}

TEST_CASE("codec messages are kept per thread, other output passes through", "[io]") {
    TempFolder dir;
    const Bytes jpeg = opencv_encoded(smooth_image(96, 64, CV_8UC3), ".jpg");
    Bytes spliced = head(jpeg, jpeg.size() / 2);
    spliced.insert(spliced.end(), {0xFF, 0xD9});
    write_bytes(dir / "good.jpg", jpeg);
    write_bytes(dir / "bad.jpg", spliced);

    // libjpeg's warning about bad.jpg must fail that read only, whichever
    // thread happens to decode the good file at the same moment.
    StderrLeak leak(dir / "stderr.txt");
    std::atomic<int> good_read{0}, bad_refused{0}, wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < 25; ++i) {
                const bool bad = (i + t) % 2 == 0;
                try {
                    read_image(dir / (bad ? "bad.jpg" : "good.jpg"));
                    (bad ? wrong : good_read)++;
                } catch (const WorkError&) {
                    (bad ? bad_refused : wrong)++;
                }
            }
        });
    }
    for (std::thread& thread : threads) thread.join();
    std::fprintf(stderr, "plain stderr\n");
    std::cerr << "plain cerr" << std::endl;
    CHECK(leak.text() == "plain stderr\nplain cerr\n");
    CHECK(wrong == 0);
    CHECK(good_read == 50);
    CHECK(bad_refused == 50);
}

TEST_CASE("OpenCV's multi-line exception text becomes one line", "[io]") {
    CHECK(
        detail::one_line("OpenCV(4.6.0) grfmt_tiff.cpp:152: error: (-2:Unspecified error) in "
                         "function 'f'\n> Unsupported number of channels:\n>     'channels <= 4'\n"
                         "> where\n>     'channels' is 5\n") ==
        "OpenCV(4.6.0) grfmt_tiff.cpp:152: error: (-2:Unspecified error) in function 'f': "
        "Unsupported number of channels: 'channels <= 4': where: 'channels' is 5");
    CHECK(detail::one_line("plain") == "plain");
}

TEST_CASE("write_file_atomically replaces the destination and leaves no temporary file", "[io]") {
    TempFolder dir;
    const std::string path = dir / "out.bin";
    write_bytes(path, {'o', 'l', 'd'});
    const Bytes bytes = {1, 2, 3, 4, 5};
    write_file_atomically(path, bytes);
    CHECK(file_bytes(path) == bytes);
    CHECK(dir.leftovers().empty());

    // A name too long to fit in the temporary file's name is cut there.
    const std::string long_name = dir / (std::string(240, 'n') + ".png");
    write_file_atomically(long_name, bytes);
    CHECK(file_bytes(long_name) == bytes);
    CHECK(dir.leftovers().empty());
}

TEST_CASE("a staged file is in place only once committed", "[io]") {
    TempFolder dir;
    const std::string path = dir / "out.bin";
    write_bytes(path, {'o', 'l', 'd'});
    const Bytes bytes = {1, 2, 3};
    {
        StagedFile staged(path, bytes);
        CHECK(file_bytes(path) == Bytes{'o', 'l', 'd'});
        CHECK(dir.leftovers().size() == 1);
        // Registered, as a signal handler finds it.
        remove_pending_temp_files();
        CHECK(dir.leftovers().empty());
    }
    {
        StagedFile staged(path, bytes);  // dropped uncommitted
    }
    CHECK(file_bytes(path) == Bytes{'o', 'l', 'd'});
    CHECK(dir.leftovers().empty());

    StagedFile staged(path, bytes);
    StagedFile moved = std::move(staged);
    moved.commit();
    CHECK(file_bytes(path) == bytes);
    CHECK(dir.leftovers().empty());
}

TEST_CASE("a new output gets the mode the umask gives new files", "[io]") {
    TempFolder dir;
    const mode_t saved = ::umask(027);
    write_file_atomically(dir / "a.png", {1});
    ::umask(0);
    write_file_atomically(dir / "b.png", {1});
    ::umask(saved);
    struct stat a {
    }, b{};
    REQUIRE(::stat((dir / "a.png").c_str(), &a) == 0);
    REQUIRE(::stat((dir / "b.png").c_str(), &b) == 0);
    CHECK((a.st_mode & 0777) == 0640);
    CHECK((b.st_mode & 0777) == 0666);
}

TEST_CASE("a failed write names the path and changes nothing", "[io]") {
    TempFolder dir;
    const Bytes bytes(100000, 42);

    SECTION("missing folder") {
        CHECK_THROWS_WITH(write_file_atomically(dir / "nope/x.png", bytes),
                          dir / "nope/x.png" + ": cannot write: No such file or directory");
        CHECK_FALSE(fs::exists(dir / "nope"));
    }
    SECTION("the destination is a folder") {
        fs::create_directory(dir / "d.png");
        write_bytes(dir / "d.png/inside", {7});
        CHECK_THROWS_WITH(write_file_atomically(dir / "d.png", bytes),
                          dir / "d.png" + ": is a directory");
        CHECK_THROWS_WITH(write_file_atomically(dir / "d.png/", bytes),
                          dir / "d.png/" + ": is a directory");
        CHECK(fs::is_directory(dir / "d.png"));
        CHECK(file_bytes(dir / "d.png/inside") == Bytes{7});
    }
    SECTION("the disk fills up half way") {
        // RLIMIT_FSIZE fails the write with EFBIG after the first bytes,
        // as a full disk fails it with ENOSPC. Root is bound by it too.
        write_bytes(dir / "keep.png", {'o', 'l', 'd'});
        rlimit saved{};
        REQUIRE(::getrlimit(RLIMIT_FSIZE, &saved) == 0);
        const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
        rlimit small = saved;
        small.rlim_cur = 4096;
        REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
        std::string message;
        try {
            write_file_atomically(dir / "keep.png", bytes);
        } catch (const WorkError& e) {
            message = e.what();
        }
        ::setrlimit(RLIMIT_FSIZE, &saved);
        std::signal(SIGXFSZ, old_handler);
        CHECK(message == dir / "keep.png" + ": cannot write: File too large");
        CHECK(file_bytes(dir / "keep.png") == Bytes{'o', 'l', 'd'});
    }
    CHECK(dir.leftovers().empty());
}

namespace {
void remove_and_exit(int /*signal*/) {
    remove_pending_temp_files();
    ::_exit(42);
}
}  // namespace

TEST_CASE("an interrupted write leaves no temporary file", "[io]") {
    TempFolder dir;
    const std::string path = dir / "big.png";
    const Bytes bytes(1 << 20, 1);
    // In a child: a signal arrives in the middle of the write (SIGXFSZ from
    // a file size limit, where cudaconv would see SIGINT), and its handler
    // removes the pending temporary file before the process ends.
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        std::signal(SIGXFSZ, remove_and_exit);
        rlimit small{65536, 65536};
        ::setrlimit(RLIMIT_FSIZE, &small);
        try {
            write_file_atomically(path, bytes);
        } catch (...) {
        }
        ::_exit(1);  // the handler did not run
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 42);
    CHECK_FALSE(fs::exists(path));
    CHECK(dir.leftovers().empty());

    // Outside a write, it touches nothing, even a file with a temporary's name.
    write_bytes(dir / ".x.png.cudaconv-abcdef", {1});
    remove_pending_temp_files();
    CHECK(fs::exists(dir / ".x.png.cudaconv-abcdef"));
}

}  // namespace cudaconv
