// A JPEG's EXIF orientation (io/exif_orientation.hpp): read from the
// header, applied on decoding as OpenCV's own cv::imread applies it (the
// oracle here), kept as stored with auto_orient off, and never a failure
// for a malformed block.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <random>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include "io/exif_orientation.hpp"
#include "io/format_probe.hpp"
#include "io/image_io.hpp"
#include "support/exif_jpeg.hpp"

namespace cudaconv {
namespace {
namespace fs = std::filesystem;

// 40x24, every pixel different, so that a wrong turn cannot pass.
cv::Mat asymmetric_image() {
    cv::Mat m(24, 40, CV_8UC3);
    for (int y = 0; y < m.rows; ++y) {
        for (int x = 0; x < m.cols; ++x) {
            m.at<cv::Vec3b>(y, x) = {static_cast<std::uint8_t>(6 * x),
                                     static_cast<std::uint8_t>(10 * y),
                                     static_cast<std::uint8_t>(x + y < 30 ? 40 : 220)};
        }
    }
    return m;
}

fs::path write_temp(const std::vector<std::uint8_t>& bytes, const std::string& name) {
    const fs::path p = fs::temp_directory_path() /
                       ("cudaconv-exif-" + std::to_string(std::random_device{}()) + "-" + name);
    std::ofstream(p, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
    return p;
}

int probed(const std::vector<std::uint8_t>& jpeg) {
    return detail::probe_image(jpeg.data(), jpeg.size()).orientation;
}

// The orientation of an APP1 payload given as bytes after the segment's length.
int payload_orientation(std::vector<std::uint8_t> segment) {
    segment.erase(segment.begin(), segment.begin() + 4);
    return exif_orientation(segment.data(), segment.size());
}

}  // namespace

TEST_CASE("EXIF orientation: each of the 8 turns as cv::imread applies it", "[exif][image_io]") {
    const cv::Mat stored = asymmetric_image();
    for (const bool big_endian : {false, true}) {
        for (int value = 1; value <= 8; ++value) {
            INFO("orientation " << value << (big_endian ? " MM" : " II"));
            const auto jpeg =
                test::jpeg_with_segment(stored, test::exif_segment(value, big_endian));
            CHECK(probed(jpeg) == value);
            const fs::path path = write_temp(jpeg, "o.jpg");
            const cv::Mat oracle = cv::imread(path.string(), cv::IMREAD_COLOR);
            const cv::Mat as_stored = cv::imread(path.string(), cv::IMREAD_UNCHANGED);

            ImageShape accepted;
            ReadOptions options;
            options.accepted = [&](const ImageShape& shape) { accepted = shape; };
            const cv::Mat turned = read_image(path.string(), options);
            REQUIRE(turned.size() == oracle.size());
            CHECK(cv::norm(turned, oracle, cv::NORM_INF) == 0);
            // The header's size, told before decoding, is the turned one.
            CHECK(accepted.width == turned.cols);
            CHECK(accepted.height == turned.rows);
            CHECK((turned.cols == 24) == swaps_sides(value));

            options.auto_orient = false;
            const cv::Mat kept = read_image(path.string(), options);
            REQUIRE(kept.size() == as_stored.size());
            CHECK(cv::norm(kept, as_stored, cv::NORM_INF) == 0);
            CHECK(read_encoded_image(path.string(), options).orientation == kUpright);
            options.auto_orient = true;
            CHECK(read_encoded_image(path.string(), options).orientation == value);
            fs::remove(path);
        }
    }
}

TEST_CASE("EXIF orientation: malformed blocks read as upright", "[exif]") {
    const auto good = test::exif_segment(6);
    CHECK(payload_orientation(good) == 6);
    // Cut anywhere short of the orientation's value: upright, no overread
    // (the sanitizer build checks the reads).
    for (std::size_t keep = 4; keep < good.size() - 8; ++keep) {
        std::vector<std::uint8_t> cut(good.begin(), good.begin() + static_cast<long>(keep));
        INFO(keep);
        const int o = payload_orientation(cut);
        CHECK((o == kUpright || o == 6));
    }
    const auto with = [&](std::size_t at, std::uint8_t byte) {
        auto bad = good;
        bad[at] = byte;
        return payload_orientation(bad);
    };
    const std::size_t tiff = 4 + 6;               // after marker, length and "Exif\0\0"
    const std::size_t entry = tiff + 8 + 2 + 12;  // the orientation entry
    CHECK(with(tiff, 'X') == kUpright);           // no byte order
    CHECK(with(tiff + 2, 43) == kUpright);        // not 42
    CHECK(with(tiff + 4, 200) == kUpright);       // directory past the end
    CHECK(with(tiff + 8, 1) == kUpright);         // the directory ends before it
    CHECK(with(tiff + 8, 0xFF) == 6);             // found before the bytes end
    CHECK(with(entry + 2, 4) == kUpright);        // LONG, not SHORT
    CHECK(with(entry + 4, 2) == kUpright);        // two values
    CHECK(with(entry + 8, 0) == kUpright);        // 0 is no orientation
    CHECK(with(entry + 8, 9) == kUpright);        // nor 9
    CHECK(with(4, 'e') == kUpright);              // "exif": not EXIF
    CHECK(exif_orientation(nullptr, 0) == kUpright);

    // In a JPEG: an APP1 that is not EXIF (XMP) before the EXIF one is
    // passed over; only the first EXIF block counts.
    const cv::Mat image = asymmetric_image();
    std::vector<std::uint8_t> xmp{0xFF, 0xE1, 0x00, 0x0C, 'h', 't', 't',
                                  'p',  ':',  '/',  '/',  'n', 's', 0};
    auto both = xmp;
    both.insert(both.end(), good.begin(), good.end());
    const auto second = test::exif_segment(3);
    both.insert(both.end(), second.begin(), second.end());
    CHECK(probed(test::jpeg_with_segment(image, both)) == 6);
    CHECK(probed(test::jpeg_with_segment(image, {})) == kUpright);
}

}  // namespace cudaconv
