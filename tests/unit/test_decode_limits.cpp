// What an image may cost before it is decoded: the memory verdict from the
// system's figures, --max-pixels' and the memory check's messages, the
// bounds that call a file too small for its header's size truncated (and
// never a real one), and the size every format's header tells.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include <opencv2/imgcodecs.hpp>

#include "base/errors.hpp"
#include "io/decode_limits.hpp"
#include "io/format_probe.hpp"
#include "io/memory_check.hpp"
#include "io/plausibility.hpp"
#include "support/random_image.hpp"

namespace cudaconv {
namespace {

using Bytes = std::vector<std::uint8_t>;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

constexpr std::uint64_t kGB = 1000 * 1000 * 1000;

Bytes encoded(const cv::Mat& image, const std::string& extension,
              const std::vector<int>& settings = {}) {
    Bytes bytes;
    REQUIRE(cv::imencode(extension, image, bytes, settings));
    return bytes;
}

detail::FormatProbe probe(const Bytes& bytes) {
    return detail::probe_image(bytes.data(), bytes.size());
}

}  // namespace

TEST_CASE("memory verdict: the least that any limit leaves", "[io][limits]") {
    MemoryFigures f;
    CHECK_FALSE(available_memory(f).has_value());
    CHECK(memory_shortfall(std::uint64_t{1} << 62, f).empty());  // nothing known: no refusal

    f.mem_available = 16 * kGB;
    CHECK(available_memory(f) == 16 * kGB);
    f.cgroup_limit = 8 * kGB;
    f.cgroup_usage = 3 * kGB;
    CHECK(available_memory(f) == 5 * kGB);
    f.address_space_limit = 10 * kGB;
    f.address_space_used = 7 * kGB;
    CHECK(available_memory(f) == 3 * kGB);
    f.data_limit = 4 * kGB;
    f.data_used = 2 * kGB;
    CHECK(available_memory(f) == 2 * kGB);
    f.data_used = 5 * kGB;  // over its limit already: nothing left, not a wrapped-round number
    CHECK(available_memory(f) == 0);
    f.data_limit.reset();

    CHECK(memory_shortfall(3 * kGB, f).empty());
    CHECK(memory_shortfall(6'400'000'000, f) == "needs about 6.4 GB, 3.0 GB available");
    f.cgroup_usage = 7'900'000'000;
    CHECK(memory_shortfall(3 * kGB, f) == "needs about 3.0 GB, 100 MB available");
}

TEST_CASE("memory figures of this process are there to read", "[io][limits]") {
    const MemoryFigures f = read_memory_figures();
    REQUIRE(f.mem_available.has_value());  // Linux's /proc/meminfo
    CHECK(*f.mem_available > 0);
    CHECK(f.address_space_used > 0);
    CHECK(f.data_used > 0);
    CHECK(available_memory(f).has_value());
}

TEST_CASE("sizes in messages keep two figures or so", "[io][limits]") {
    CHECK(approximate_bytes(0) == "0 bytes");
    CHECK(approximate_bytes(999) == "999 bytes");
    CHECK(approximate_bytes(1000) == "1.0 KB");
    CHECK(approximate_bytes(12'345) == "12 KB");
    CHECK(approximate_bytes(850'000'000) == "850 MB");
    CHECK(approximate_bytes(999'600'000) == "1.0 GB");
    CHECK(approximate_bytes(6'400'000'000) == "6.4 GB");
    CHECK(approximate_bytes(std::uint64_t{1} << 63) == "9.2 EB");
}

TEST_CASE("check_shape: --max-pixels and the memory check, one line each", "[io][limits]") {
    ReadOptions options;
    const ImageShape big{32768, 32767, 4, 2, 8};
    CHECK_THROWS_WITH(check_shape(big, "x.png", options),
                      "x.png: 32768x32767 pixels is more than --max-pixels 268435456 (raise it, or "
                      "0 for no limit)");
    CHECK_THROWS_AS(check_shape(big, "x.png", options), WorkError);
    const ImageShape at_limit{16384, 16384, 1, 1, 1};
    CHECK_NOTHROW(check_shape(at_limit, "x.png", options));

    options.max_pixels = 0;  // no limit: the memory check still holds
    options.bytes_beside = [](const ImageShape& shape) { return shape.bytes(); };
    CHECK_THROWS_WITH(check_shape({2'000'000'000, 1'000'000'000, 4, 1, 4}, "y.png", options),
                      StartsWith("y.png: 2000000000x1000000000 RGBA needs about 16 EB, ") &&
                          Contains(" available"));
    CHECK_THROWS_WITH(check_shape({2'000'000'000, 1'000'000'000, 0, 0, 16}, "z.bmp", options),
                      StartsWith("z.bmp: 2000000000x1000000000 image needs about "));
    // Once decoded only what goes beside the image is still to come.
    options.bytes_beside = nullptr;
    CHECK_NOTHROW(check_shape({2'000'000'000, 2'000'000'000, 4, 1, 4}, "y.png", options, true));

    const WorkError oom = out_of_memory("w.png", {20000, 20000, 3, 2, 6}, options);
    CHECK_THAT(oom.what(), StartsWith("w.png: out of memory: 20000x20000 16-bit RGB needs about "
                                      "2.4 GB, ") &&
                               Contains(" available"));
}

TEST_CASE("plausibility: PNG's bound is deflate's 1032:1 over the filtered rows", "[io][limits]") {
    // 1000 rows of 1 + 1000 bytes.
    CHECK(detail::least_png_idat_bytes(1000, 1000, 8, false) == (1001000 - 1) / 1032 - 1);
    CHECK(detail::least_png_idat_bytes(1, 1, 8, false) == 0);
    // Interlaced rows carry a filter byte a pass: more raw bytes.
    CHECK(detail::least_png_idat_bytes(1000, 1000, 8, true) >
          detail::least_png_idat_bytes(1000, 1000, 8, false));
    // 2^31 a side at 64 bits a pixel is past 2^64 raw bytes, not a wrapped number.
    CHECK(detail::least_png_idat_bytes(0x7FFFFFFF, 0x7FFFFFFF, 64, false) >
          (std::uint64_t{1} << 54));

    // The most compressible images there are, at zlib's best, through a
    // whole file: never refused, and the bound not far below them.
    for (const int type : {CV_8UC1, CV_8UC3, CV_16UC4}) {
        for (const int side : {1, 7, 64, 513, 2000}) {
            const Bytes png = encoded(cv::Mat(side, side + 3, type, cv::Scalar::all(0)), ".png",
                                      {cv::IMWRITE_PNG_COMPRESSION, 9});
            const detail::FormatProbe p = probe(png);
            INFO("type " << type << ", " << side + 3 << "x" << side << ", " << png.size()
                         << " bytes");
            CHECK(p.problem.empty());
            if (side == 2000) {
                const std::uint64_t bound = detail::least_png_idat_bytes(
                    static_cast<std::uint64_t>(side + 3), static_cast<std::uint64_t>(side),
                    8 * static_cast<int>(CV_ELEM_SIZE(type)), false);
                CHECK(bound * 2 > png.size() - 57);  // less the chunks around the data
            }
        }
    }
}

TEST_CASE("plausibility: JPEG's bound never refuses a real JPEG", "[io][limits]") {
    // Flat images (every block the same: the fewest bits a coder can give)
    // at every quality, gray and colour, sequential, optimised and
    // progressive.
    const std::vector<std::vector<int>> modes = {
        {}, {cv::IMWRITE_JPEG_OPTIMIZE, 1}, {cv::IMWRITE_JPEG_PROGRESSIVE, 1}};
    for (const int type : {CV_8UC1, CV_8UC3}) {
        for (const cv::Size size :
             {cv::Size(8, 8), cv::Size(17, 9), cv::Size(640, 480), cv::Size(2048, 1536)}) {
            const cv::Mat flat(size, type, cv::Scalar(90, 140, 200));
            const int step = size.area() > 1'000'000 ? 11 : size.area() > 100'000 ? 3 : 1;
            for (int quality = 1; quality <= 100; quality += step) {
                for (const std::vector<int>& mode : modes) {
                    std::vector<int> settings = mode;
                    settings.insert(settings.end(), {cv::IMWRITE_JPEG_QUALITY, quality});
                    const Bytes jpeg = encoded(flat, ".jpg", settings);
                    const detail::FormatProbe p = probe(jpeg);
                    INFO(size << " type " << type << " quality " << quality << " settings "
                              << settings.size() << ": " << jpeg.size() << " bytes");
                    REQUIRE(p.problem.empty());
                }
            }
        }
    }
    // 2 bits a block in sequential scans, 1 in progressive ones; 4:2:0
    // chroma has a quarter of the blocks.
    const std::vector<detail::JpegSampling> gray = {{1, 1}};
    const std::vector<detail::JpegSampling> colour = {{2, 2}, {1, 1}, {1, 1}};
    CHECK(detail::least_jpeg_scan_bytes(800, 800, gray, detail::JpegCoding::sequential_huffman) ==
          100 * 100 * 2 / 8);
    CHECK(detail::least_jpeg_scan_bytes(800, 800, gray, detail::JpegCoding::progressive_huffman) ==
          100 * 100 / 8);
    CHECK(detail::least_jpeg_scan_bytes(800, 800, colour, detail::JpegCoding::sequential_huffman) ==
          (100 * 100 + 2 * 50 * 50) * 2 / 8);
    CHECK(detail::least_jpeg_scan_bytes(800, 800, colour, detail::JpegCoding::other) == 0);
}

TEST_CASE("plausibility: files far too small for their headers' size are truncated",
          "[io][limits]") {
    // A real JPEG whose frame header claims 16000x16000.
    Bytes jpeg = encoded(cv::Mat(64, 64, CV_8UC3, cv::Scalar(1, 2, 3)), ".jpg");
    for (std::size_t i = 0; i + 8 < jpeg.size(); ++i) {
        if (jpeg[i] == 0xFF && jpeg[i + 1] == 0xC0) {
            jpeg[i + 5] = jpeg[i + 7] = 16000 >> 8;
            jpeg[i + 6] = jpeg[i + 8] = 16000 & 0xFF;
            break;
        }
    }
    const detail::FormatProbe p = probe(jpeg);
    CHECK(p.width == 16000);
    CHECK_THAT(p.problem, StartsWith("truncated JPEG: its ") &&
                              Contains(" bytes of scan data cannot hold 16000x16000 pixels (at "
                                       "least 1500000 bytes)"));
}

// Each format's header gives the size OpenCV decodes, and no pixel takes
// more than the probe's pixel_bytes.
TEST_CASE("the probe tells every format's size before decoding", "[io][limits]") {
    struct Case {
        std::string extension;
        int type;
        std::vector<int> settings;
    };
    const std::vector<Case> cases = {
        {".jpg", CV_8UC3, {}},
        {".png", CV_16UC4, {}},
        {".tif", CV_32FC3, {}},
        {".bmp", CV_8UC3, {}},
        {".bmp", CV_8UC1, {}},
        {".ppm", CV_16UC3, {}},
        {".pgm", CV_8UC1, {}},
        {".pbm", CV_8UC1, {}},
        {".pam", CV_8UC4, {cv::IMWRITE_PAM_TUPLETYPE, cv::IMWRITE_PAM_FORMAT_RGB_ALPHA}},
        {".pfm", CV_32FC3, {}},
        {".pfm", CV_32FC1, {}},
        {".webp", CV_8UC3, {cv::IMWRITE_WEBP_QUALITY, 80}},  // VP8
        {".webp", CV_8UC3, {}},                              // VP8L
        {".webp", CV_8UC4, {cv::IMWRITE_WEBP_QUALITY, 80}},  // VP8X
        {".ras", CV_8UC3, {}},
        {".hdr", CV_32FC3, {}},
        {".exr", CV_32FC3, {}},
        {".jp2", CV_8UC3, {}},
    };
    for (const Case& c : cases) {
        CAPTURE(c.extension, c.type, c.settings.size());
        if (!cv::haveImageWriter("x" + c.extension)) {
            WARN("this OpenCV has no " << c.extension << " codec: not checked");
            continue;
        }
        const cv::Mat image = test::random_image(77, 65, c.type, 11);  // JPEG 2000: 32 and up
        const Bytes bytes = encoded(image, c.extension, c.settings);
        const detail::FormatProbe p = probe(bytes);
        const cv::Mat decoded = cv::imdecode(bytes, cv::IMREAD_UNCHANGED);
        REQUIRE(!decoded.empty());
        CHECK(p.width == decoded.cols);
        CHECK(p.height == decoded.rows);
        CHECK(p.pixel_bytes >= static_cast<int>(decoded.elemSize()));
    }
}

TEST_CASE("the probe reads headers OpenCV does not write", "[io][limits]") {
    // A BMP claiming 30000x30000 in 8-bit RLE, with next to no data.
    Bytes bmp = {'B', 'M', 0, 0, 0, 0, 0, 0, 0, 0, 54 + 8, 0, 0, 0, 40, 0, 0, 0};
    const auto le32 = [&bmp](std::uint32_t v) {
        for (int i = 0; i < 4; ++i) bmp.push_back(static_cast<std::uint8_t>(v >> 8 * i));
    };
    le32(30000);
    le32(static_cast<std::uint32_t>(-30000));         // top-down
    bmp.insert(bmp.end(), {1, 0, 8, 0, 1, 0, 0, 0});  // planes, bits, BI_RLE8
    bmp.resize(54 + 8 + 4, 0);
    detail::FormatProbe p = probe(bmp);
    CHECK(p.format == detail::ImageFormat::bmp);
    CHECK(p.width == 30000);
    CHECK(p.height == 30000);

    // A PAM with comments between its lines, a Radiance HDR with the
    // columns first, a bare JPEG 2000 codestream.
    const std::string pam = "P7\nWIDTH 640\n# a note\nHEIGHT 480\nDEPTH 2\nMAXVAL 65535\n"
                            "TUPLTYPE GRAYSCALE_ALPHA\nENDHDR\n";
    p = probe(Bytes(pam.begin(), pam.end()));
    CHECK(p.width == 640);
    CHECK(p.height == 480);
    CHECK(p.pixel_bytes == 4);
    const std::string hdr = "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n+X 300 -Y 200\n";
    p = probe(Bytes(hdr.begin(), hdr.end()));
    CHECK(p.width == 300);
    CHECK(p.height == 200);
    const Bytes codestream = {0xFF, 0x4F, 0xFF, 0x51, 0, 41, 0,    0,  0, 0, 0x10, 0, 0,
                              0,    0x08, 0,  // 4096 x 2048 reference grid
                              0,    0,    0,    96,   0, 0,  0,    48,  // image offset 96, 48
                              0,    0,    0x10, 0,    0, 0,  0x08, 0,   // tiles
                              0,    0,    0,    0,    0, 0,  0,    0,  0, 3, 7,    1, 1};
    p = probe(codestream);
    CHECK(p.format == detail::ImageFormat::jpeg2000);
    CHECK(p.width == 4096 - 96);
    CHECK(p.height == 2048 - 48);
    CHECK(p.pixel_bytes == 3);
    // A header that claims no plausible size leaves it untold.
    const std::string nonsense = "P6\n-3 abc\n255\n";
    CHECK(probe(Bytes(nonsense.begin(), nonsense.end())).width == 0);
}

}  // namespace cudaconv
