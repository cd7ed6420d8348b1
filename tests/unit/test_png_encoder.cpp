// Our PNG writer (libdeflate) against OpenCV's PNG reader: every depth and
// channel count it writes, odd sizes, every level, pixels identical.
#include <catch2/catch.hpp>

#include <libdeflate.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "io/png_encoder.hpp"
#include "io/run_deflate.hpp"
#include "support/random_image.hpp"
#include "support/source_dir.hpp"

namespace cudaconv {
namespace {

cv::Mat decode(const std::vector<std::uint8_t>& png) {
    return cv::imdecode(png, cv::IMREAD_UNCHANGED);
}

// The data of each IDAT chunk of a PNG, in order.
std::vector<std::vector<std::uint8_t>> idat_chunks(const std::vector<std::uint8_t>& png) {
    std::vector<std::vector<std::uint8_t>> chunks;
    for (std::size_t at = 8; at + 8 <= png.size();) {
        const std::size_t length = (std::size_t{png[at]} << 24) | (std::size_t{png[at + 1]} << 16) |
                                   (std::size_t{png[at + 2]} << 8) | png[at + 3];
        if (std::memcmp(&png[at + 4], "IDAT", 4) == 0) {
            chunks.emplace_back(png.begin() + at + 8, png.begin() + at + 8 + length);
        }
        at += 12 + length;
    }
    return chunks;
}

// The filter bytes that start the rows of a PNG of `channels` samples of
// `sample_bytes` each: its IDATs joined and inflated.
std::set<int> filter_bytes(const std::vector<std::uint8_t>& png, int width, int height,
                           int channels, int sample_bytes = 1) {
    std::vector<std::uint8_t> stream;
    for (const auto& chunk : idat_chunks(png))
        stream.insert(stream.end(), chunk.begin(), chunk.end());
    const std::size_t row_bytes = static_cast<std::size_t>(width) * channels * sample_bytes + 1;
    std::vector<std::uint8_t> rows(row_bytes * height);
    libdeflate_decompressor* inflater = libdeflate_alloc_decompressor();
    const auto result = libdeflate_zlib_decompress(inflater, stream.data(), stream.size(),
                                                   rows.data(), rows.size(), nullptr);
    libdeflate_free_decompressor(inflater);
    REQUIRE(result == LIBDEFLATE_SUCCESS);
    std::set<int> filters;
    for (int y = 0; y < height; ++y) filters.insert(rows[y * row_bytes]);
    return filters;
}

}  // namespace

TEST_CASE("encode_png round-trips through OpenCV's reader, pixel for pixel", "[io][png]") {
    std::uint64_t seed = 1;
    for (const int depth : {CV_8U, CV_16U}) {
        for (const int channels : {1, 3, 4}) {
            for (const auto& [w, h] :
                 std::vector<std::pair<int, int>>{{1, 1}, {7, 3}, {1, 40}, {257, 33}, {640, 480}}) {
                for (const int level : {0, 1, 9}) {
                    const cv::Mat image =
                        test::random_image(w, h, CV_MAKETYPE(depth, channels), ++seed);
                    const std::vector<std::uint8_t> png = encode_png(image, level);
                    INFO(w << "x" << h << " depth " << depth << " channels " << channels
                           << " level " << level);
                    REQUIRE(png.size() > 8);
                    CHECK(std::memcmp(png.data(), "\x89PNG\r\n\x1a\n", 8) == 0);
                    const cv::Mat back = decode(png);
                    REQUIRE(back.type() == image.type());
                    REQUIRE(back.size() == image.size());
                    CHECK(cv::norm(back, image, cv::NORM_INF) == 0.0);
                }
            }
        }
    }
}

TEST_CASE("encode_png compresses: a flat image is a small file", "[io][png]") {
    const cv::Mat flat(3000, 4000, CV_8UC3, cv::Scalar(10, 200, 30));
    const std::vector<std::uint8_t> png = encode_png(flat, 1);
    CHECK(png.size() < 200000);  // 36 MB of samples
    CHECK(cv::norm(decode(png), flat, cv::NORM_INF) == 0.0);
}

// Each row is the first one plus y % 200 (saturating): "Up" leaves mostly
// ones and zeros, "None" random bytes. Sparse bright dots on black, like an edge map:
// "None" keeps mostly zeros, "Up" doubles every dot. The writer picks the
// one filter that compresses its sample smaller, and both images still
// decode to themselves.
TEST_CASE("encode_png filters rows Up on gradients and None on sparse dots", "[io][png]") {
    const int width = 640, height = 480;
    cv::Mat ramp(height, width, CV_8UC3);
    const cv::Mat first = test::random_image(width, 1, CV_8UC3, 5);
    for (int y = 0; y < height; ++y) ramp.row(y) = first + cv::Scalar::all(y % 200);
    const std::vector<std::uint8_t> ramp_png = encode_png(ramp, 1);
    CHECK(filter_bytes(ramp_png, width, height, 3) == std::set<int>{2});
    CHECK(cv::norm(decode(ramp_png), ramp, cv::NORM_INF) == 0.0);

    cv::Mat dots(height, width, CV_8UC3, cv::Scalar::all(0));
    std::mt19937 gen(7);
    for (int i = 0; i < width * height / 50; ++i) {
        dots.at<cv::Vec3b>(static_cast<int>(gen() % height), static_cast<int>(gen() % width)) =
            cv::Vec3b(static_cast<std::uint8_t>(gen()), static_cast<std::uint8_t>(gen()),
                      static_cast<std::uint8_t>(gen()));
    }
    const std::vector<std::uint8_t> dots_png = encode_png(dots, 1);
    CHECK(filter_bytes(dots_png, width, height, 3) == std::set<int>{0});
    CHECK(cv::norm(decode(dots_png), dots, cv::NORM_INF) == 0.0);
}

// Rows are filtered 16 bytes at a time (a shuffle of whole pixels) and the
// rest pixel by pixel: every depth and channel count, widths on both sides
// of the shuffle's 12-16 bytes, each filter.
TEST_CASE("encode_png writes rows of every width in PNG's byte order, Up and None", "[io][png]") {
    const int height = 64;
    std::uint64_t seed = 100;
    for (const int depth : {CV_8U, CV_16U}) {
        for (const int channels : {1, 3, 4}) {
            const int type = CV_MAKETYPE(depth, channels);
            for (const int width : {1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 31, 32, 33, 100}) {
                INFO(width << " wide, depth " << depth << ", channels " << channels);
                // Each row the first plus a constant: Up makes them zeros.
                cv::Mat ramp(height, width, type);
                const cv::Mat first = test::random_image(width, 1, type, ++seed);
                for (int y = 0; y < height; ++y) ramp.row(y) = first + cv::Scalar::all(y);
                // Mostly zeros: None keeps the runs that Up would break.
                cv::Mat dots(height, width, type, cv::Scalar::all(0));
                const cv::Mat noise = test::random_image(width, height, type, ++seed);
                std::mt19937 gen(static_cast<unsigned>(seed));
                for (int i = 0; i < width * height / 10; ++i) {
                    const int y = static_cast<int>(gen() % height);
                    const int x = static_cast<int>(gen() % width);
                    noise(cv::Rect(x, y, 1, 1)).copyTo(dots(cv::Rect(x, y, 1, 1)));
                }
                for (const auto& [image, filter] : {std::pair{ramp, 2}, std::pair{dots, 0}}) {
                    const std::vector<std::uint8_t> png = encode_png(image, 1);
                    CHECK(cv::norm(decode(png), image, cv::NORM_INF) == 0.0);
                    if (width >= 16) {  // wide enough for the choice to be plain
                        CHECK(filter_bytes(png, width, height, channels, depth == CV_8U ? 1 : 2) ==
                              std::set<int>{filter});
                    }
                }
            }
        }
    }
}

TEST_CASE("encode_png splits a long stream into consecutive IDAT chunks", "[io][png]") {
    const cv::Mat image = test::random_image(300, 200, CV_8UC3, 99);
    const std::vector<std::uint8_t> png = encode_png(image, 1, 1000);
    const auto idats = idat_chunks(png);
    for (const auto& chunk : idats) CHECK(chunk.size() <= 1000);
    CHECK(idats.size() > 100);  // 180 KB of random samples do not compress
    CHECK(cv::norm(decode(png), image, cv::NORM_INF) == 0.0);
}

TEST_CASE("encode_png refuses what PNG cannot hold", "[io][png]") {
    CHECK_THROWS_AS(encode_png(cv::Mat(), 1), std::invalid_argument);
    CHECK_THROWS_AS(encode_png(cv::Mat(2, 2, CV_32FC1, cv::Scalar(0)), 1), std::invalid_argument);
    CHECK_THROWS_AS(encode_png(cv::Mat(2, 2, CV_8UC2, cv::Scalar(0)), 1), std::invalid_argument);
    CHECK_THROWS_AS(encode_png(cv::Mat(2, 2, CV_8UC(5), cv::Scalar(0)), 1), std::invalid_argument);
}

// Level 1 compresses by runs alone where that is as small (photos, edge
// maps) and by libdeflate's string search where strings repeat at a
// distance, which runs cannot code: a tile of random bytes repeated across
// the image shrinks to almost nothing only through the search.
TEST_CASE("encode_png at level 1 keeps the string search where strings repeat", "[io][png]") {
    const cv::Mat tile = test::random_image(16, 16, CV_8UC3, 21);
    cv::Mat tiled;
    cv::repeat(tile, 40, 50, tiled);  // 800 x 640
    const std::vector<std::uint8_t> png = encode_png(tiled, 1);
    CHECK(png.size() < tiled.total() * 3 / 20);
    CHECK(cv::norm(decode(png), tiled, cv::NORM_INF) == 0.0);
}

TEST_CASE("encode_png at level 1 is no larger than libdeflate's level 1 on a photo", "[io][png]") {
    const cv::Mat photo = cv::imread(
        (cudaconv::test::source_dir() / "images" / "rocket.jpg").string(), cv::IMREAD_COLOR);
    REQUIRE_FALSE(photo.empty());
    const std::vector<std::uint8_t> png = encode_png(photo, 1);
    CHECK(cv::norm(decode(png), photo, cv::NORM_INF) == 0.0);
    // The same rows through libdeflate at level 1, filtered Up (as PNG's
    // filter 2: each byte minus the one above), RGB order.
    const std::size_t row_bytes = static_cast<std::size_t>(photo.cols) * 3;
    std::vector<std::uint8_t> rows;
    for (int y = 0; y < photo.rows; ++y) {
        rows.push_back(2);
        for (int x = 0; x < photo.cols; ++x) {
            for (int c : {2, 1, 0}) {
                const int v = photo.at<cv::Vec3b>(y, x)[c];
                const int u = y > 0 ? photo.at<cv::Vec3b>(y - 1, x)[c] : 0;
                rows.push_back(static_cast<std::uint8_t>(v - u));
            }
        }
    }
    REQUIRE(rows.size() == (row_bytes + 1) * photo.rows);
    libdeflate_compressor* c = libdeflate_alloc_compressor(1);
    std::vector<std::uint8_t> out(libdeflate_zlib_compress_bound(c, rows.size()));
    const std::size_t deflated =
        libdeflate_zlib_compress(c, rows.data(), rows.size(), out.data(), out.size());
    libdeflate_free_compressor(c);
    INFO("ours " << png.size() << " bytes, libdeflate level 1 " << deflated << " bytes of IDAT");
    CHECK(png.size() <= deflated * 105 / 100 + 100);
}

// A single image's PNG is filtered and compressed on several threads: the
// file is the one-thread file, byte for byte (a single image gets every
// core, so its bytes must not depend on the machine), and decodes to the
// image.
TEST_CASE("encode_png on several threads writes the same file", "[io][png]") {
    const cv::Mat photo = cv::imread(
        (cudaconv::test::source_dir() / "images" / "rocket.jpg").string(), cv::IMREAD_COLOR);
    REQUIRE_FALSE(photo.empty());
    cv::Mat big;
    cv::resize(photo, big, cv::Size(1600, 1000), 0, 0, cv::INTER_LINEAR);  // 4.8 MB of rows
    const std::vector<std::uint8_t> one = encode_png(big, 1, kMaxIdatBytes, 1);
    for (const int threads : {2, 5, 16}) {
        const std::vector<std::uint8_t> several = encode_png(big, 1, kMaxIdatBytes, threads);
        INFO("threads " << threads);
        CHECK(cv::norm(decode(several), big, cv::NORM_INF) == 0.0);
        REQUIRE(several.size() == one.size());
        CHECK(std::equal(several.begin(), several.end(), one.begin()));
    }
    const cv::Mat gray16 = test::random_image(700, 900, CV_16UC1, 4);  // stored blocks
    CHECK(cv::norm(decode(encode_png(gray16, 1, kMaxIdatBytes, 3)), gray16, cv::NORM_INF) == 0.0);
}

}  // namespace cudaconv

namespace cudaconv {
namespace {

// An image's rows filtered Up (photos) or None, in PNG's byte order with
// their filter bytes, as a device stream would hold them, and its
// runs-only zlib stream.
struct RowsStream {
    std::vector<std::uint8_t> rows;
    std::vector<std::uint8_t> zlib;
    std::vector<std::uint8_t> sample;
};

RowsStream rows_stream(const cv::Mat& image, bool up) {  // 8-bit BGR
    RowsStream s;
    const std::size_t stride = static_cast<std::size_t>(image.cols) * 3 + 1;
    for (int y = 0; y < image.rows; ++y) {
        s.rows.push_back(up ? 2 : 0);
        for (int x = 0; x < image.cols; ++x) {
            for (int c : {2, 1, 0}) {
                const int above = up && y > 0 ? image.at<cv::Vec3b>(y - 1, x)[c] : 0;
                s.rows.push_back(static_cast<std::uint8_t>(image.at<cv::Vec3b>(y, x)[c] - above));
            }
        }
    }
    s.zlib.resize(run_deflate_bound(s.rows.size()));
    s.zlib.resize(run_deflate_zlib(s.rows.data(), s.rows.size(), s.zlib.data()));
    for (int y : png_sample_rows(image.rows)) {
        s.sample.insert(s.sample.end(), s.rows.begin() + static_cast<std::ptrdiff_t>(y * stride),
                        s.rows.begin() + static_cast<std::ptrdiff_t>((y + 1) * stride));
    }
    return s;
}

}  // namespace

// The PNG around a stream made elsewhere (the GPU's): kept as it is where
// runs compress the sample about as well as a search, inflated and
// compressed again by libdeflate where strings repeat at a distance; the
// pixels the same either way.
TEST_CASE("png_from_runs_stream keeps a runs stream, and recompresses where strings repeat",
          "[io][png]") {
    const cv::Mat photo = cv::imread(
        (cudaconv::test::source_dir() / "images" / "rocket.jpg").string(), cv::IMREAD_COLOR);
    REQUIRE_FALSE(photo.empty());
    const RowsStream kept = rows_stream(photo, true);
    const std::vector<std::uint8_t> png =
        png_from_runs_stream(photo.cols, photo.rows, 1, 3, kept.zlib, kept.sample);
    CHECK(cv::norm(decode(png), photo, cv::NORM_INF) == 0.0);
    const auto chunks = idat_chunks(png);
    REQUIRE(chunks.size() == 1);
    CHECK(chunks[0] == kept.zlib);  // the stream as it came

    const cv::Mat tile = test::random_image(16, 16, CV_8UC3, 21);
    cv::Mat tiled;
    cv::repeat(tile, 40, 50, tiled);  // 800 x 640
    const RowsStream searched = rows_stream(tiled, false);
    const std::vector<std::uint8_t> smaller =
        png_from_runs_stream(tiled.cols, tiled.rows, 1, 3, searched.zlib, searched.sample);
    CHECK(cv::norm(decode(smaller), tiled, cv::NORM_INF) == 0.0);
    CHECK(smaller.size() < searched.zlib.size() / 4);

    // A stream that does not inflate to the rows is an error, not a file.
    std::vector<std::uint8_t> broken = searched.zlib;
    broken.resize(broken.size() / 2);
    CHECK_THROWS_AS(png_from_runs_stream(tiled.cols, tiled.rows, 1, 3, broken, searched.sample),
                    std::runtime_error);
}

}  // namespace cudaconv
