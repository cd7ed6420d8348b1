// cudaconv's PNG reader against OpenCV's: the same samples for every colour
// type, bit depth, interlacing and transparency PNG has (files written here
// through libpng's own writer, random pixels, odd sizes), and for the
// sample images; and where it differs on purpose: image data past the last
// row, a header's size refused before anything is allocated, a decode
// stopped on request.
#include <catch2/catch.hpp>

#include <png.h>
#include <zlib.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <opencv2/imgcodecs.hpp>

#include "base/errors.hpp"
#include "io/png_reader.hpp"
#include "support/black_png.hpp"
#include "support/source_dir.hpp"

namespace cudaconv {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<std::uint8_t>;
using Catch::Matchers::Contains;

struct PngLayout {
    int width = 1;
    int height = 1;
    int colour_type = PNG_COLOR_TYPE_GRAY;
    int bit_depth = 8;
    bool interlaced = false;
    bool transparency = false;  // a tRNS chunk (gray, RGB and palette images)
};

std::string describe(const PngLayout& l) {
    return std::to_string(l.width) + "x" + std::to_string(l.height) + " colour type " +
           std::to_string(l.colour_type) + ", " + std::to_string(l.bit_depth) + "-bit" +
           (l.interlaced ? ", interlaced" : "") + (l.transparency ? ", tRNS" : "");
}

void append_bytes(png_structp png, png_bytep data, png_size_t size) {
    auto* out = static_cast<Bytes*>(png_get_io_ptr(png));
    out->insert(out->end(), data, data + size);
}

int samples_per_pixel(int colour_type) {
    switch (colour_type) {
        case PNG_COLOR_TYPE_RGB: return 3;
        case PNG_COLOR_TYPE_GRAY_ALPHA: return 2;
        case PNG_COLOR_TYPE_RGB_ALPHA: return 4;
        default: return 1;
    }
}

// Random pixels through libpng's writer. The transparent colour (tRNS) is
// one that occurs, so that expanding it to alpha is tested.
Bytes write_png(const PngLayout& l, std::uint32_t seed) {
    std::mt19937 random(seed);
    const int samples = samples_per_pixel(l.colour_type);
    const int palette_size = l.colour_type == PNG_COLOR_TYPE_PALETTE
                                 ? std::min(1 << l.bit_depth, 5 + static_cast<int>(seed % 7))
                                 : 0;
    const unsigned top = l.colour_type == PNG_COLOR_TYPE_PALETTE ? palette_size - 1
                                                                 : (1u << l.bit_depth) - 1;
    const std::size_t row_bytes =
        (static_cast<std::size_t>(l.width) * samples * l.bit_depth + 7) / 8;
    std::vector<Bytes> rows(l.height, Bytes(row_bytes, 0));
    std::vector<std::vector<unsigned>> values(l.height);
    for (int y = 0; y < l.height; ++y) {
        for (int i = 0; i < l.width * samples; ++i) {
            const unsigned v = random() % (top + 1);
            values[y].push_back(v);
            Bytes& row = rows[y];
            if (l.bit_depth == 16) {
                row[2 * i] = static_cast<std::uint8_t>(v >> 8);
                row[2 * i + 1] = static_cast<std::uint8_t>(v);
            } else {
                const int bit = i * l.bit_depth;
                row[bit / 8] |= static_cast<std::uint8_t>(v << (8 - l.bit_depth - bit % 8));
            }
        }
    }

    Bytes out;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
    png_infop info = png_create_info_struct(png);
    REQUIRE((png && info));
    if (setjmp(png_jmpbuf(png)) != 0) {
        png_destroy_write_struct(&png, &info);
        FAIL("libpng could not write " << describe(l));
    }
    png_set_write_fn(png, &out, append_bytes, nullptr);
    png_set_IHDR(png, info, static_cast<png_uint_32>(l.width), static_cast<png_uint_32>(l.height),
                 l.bit_depth, l.colour_type,
                 l.interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    std::vector<png_color> palette(palette_size);
    std::vector<png_byte> palette_alpha(palette_size);
    for (int i = 0; i < palette_size; ++i) {
        palette[i] = {static_cast<png_byte>(random()), static_cast<png_byte>(random()),
                      static_cast<png_byte>(random())};
        palette_alpha[i] = static_cast<png_byte>(random());
    }
    if (palette_size > 0) png_set_PLTE(png, info, palette.data(), palette_size);
    png_color_16 transparent{};
    const unsigned* first = values[0].data();
    transparent.gray = static_cast<png_uint_16>(first[0]);
    if (l.colour_type == PNG_COLOR_TYPE_RGB) {
        transparent.red = static_cast<png_uint_16>(first[0]);
        transparent.green = static_cast<png_uint_16>(first[1]);
        transparent.blue = static_cast<png_uint_16>(first[2]);
    }
    if (l.transparency) {
        const int entries = palette_size > 0 ? std::max(1, palette_size - 2) : 1;
        png_set_tRNS(png, info, palette_size > 0 ? palette_alpha.data() : nullptr, entries,
                     palette_size > 0 ? nullptr : &transparent);
    }
    png_write_info(png, info);
    std::vector<png_bytep> row_pointers;
    for (Bytes& row : rows) row_pointers.push_back(row.data());
    png_write_image(png, row_pointers.data());
    png_write_end(png, nullptr);
    png_destroy_write_struct(&png, &info);
    return out;
}

// Every layout PNG allows: colour type x its bit depths x interlacing x
// tRNS where the colour type takes one.
std::vector<PngLayout> every_layout() {
    const std::vector<std::pair<int, std::vector<int>>> depths = {
        {PNG_COLOR_TYPE_GRAY, {1, 2, 4, 8, 16}},
        {PNG_COLOR_TYPE_RGB, {8, 16}},
        {PNG_COLOR_TYPE_PALETTE, {1, 2, 4, 8}},
        {PNG_COLOR_TYPE_GRAY_ALPHA, {8, 16}},
        {PNG_COLOR_TYPE_RGB_ALPHA, {8, 16}}};
    std::vector<PngLayout> layouts;
    for (const auto& [colour_type, bit_depths] : depths) {
        const bool takes_trns = (colour_type & PNG_COLOR_MASK_ALPHA) == 0;
        for (int bit_depth : bit_depths) {
            for (bool interlaced : {false, true}) {
                for (bool transparency : {false, true}) {
                    if (transparency && !takes_trns) continue;
                    layouts.push_back({1, 1, colour_type, bit_depth, interlaced, transparency});
                }
            }
        }
    }
    return layouts;
}

void check_same_as_opencv(const Bytes& png, const std::string& what) {
    INFO(what);
    const cv::Mat expected = cv::imdecode(png, cv::IMREAD_UNCHANGED);
    REQUIRE(!expected.empty());
    const cv::Mat ours = decode_png(png.data(), png.size(), "test.png");
    REQUIRE(ours.type() == expected.type());
    REQUIRE(ours.size() == expected.size());
    CHECK(cv::norm(ours, expected, cv::NORM_INF) == 0);
}

Bytes file_bytes(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return Bytes(std::istreambuf_iterator<char>(in), {});
}

Bytes black(std::uint32_t width, std::uint32_t height, std::uint64_t extra = 0,
            std::size_t idat_bytes = 0) {
    const std::string png = test::black_png(width, height, 0, 8, extra, idat_bytes);
    return Bytes(png.begin(), png.end());
}

}  // namespace

TEST_CASE("png reader: every colour type, depth, interlacing and tRNS as OpenCV reads it",
          "[io][png]") {
    const std::vector<std::pair<int, int>> sizes = {{1, 1}, {2, 1}, {1, 9}, {7, 3}, {37, 23}};
    std::uint32_t seed = 20251126;
    for (PngLayout layout : every_layout()) {
        for (const auto& [width, height] : sizes) {
            layout.width = width;
            layout.height = height;
            check_same_as_opencv(write_png(layout, ++seed),
                                 describe(layout) + ", seed " + std::to_string(seed));
        }
    }
}

TEST_CASE("png reader: the sample images and goldens as OpenCV reads them", "[io][png]") {
    int checked = 0;
    for (const char* folder : {"images", "images/golden"}) {
        for (const auto& entry : fs::directory_iterator(cudaconv::test::source_dir() / folder)) {
            if (entry.path().extension() != ".png") continue;
            check_same_as_opencv(file_bytes(entry.path()), entry.path().string());
            ++checked;
        }
    }
    CHECK(checked >= 30);
}

TEST_CASE("png reader: image data past the last row is corruption, found at once", "[io][png]") {
    // 100x100 pixels, then 2 GB more zeros: OpenCV's reader inflates them
    // all to check the stream's end, and keeps the image with a warning.
    // In 64 KB chunks libpng warns of the data past the last row; in one
    // chunk it refuses a chunk longer than the rows could take.
    for (const std::size_t idat_bytes : {std::size_t{65536}, std::size_t{0}}) {
        CAPTURE(idat_bytes);
        const Bytes bomb = black(100, 100, std::uint64_t{2} << 30, idat_bytes);
        const auto start = std::chrono::steady_clock::now();
        CHECK_THROWS_WITH(decode_png(bomb.data(), bomb.size(), "bomb.png"),
                          "bomb.png: truncated or corrupt PNG data (more image data than its "
                          "100x100 pixels)");
        CHECK(std::chrono::steady_clock::now() - start < std::chrono::milliseconds(100));
    }

    const Bytes exact = black(100, 100);
    CHECK(decode_png(exact.data(), exact.size(), "exact.png").size() == cv::Size(100, 100));
    Bytes claims_more = black(100, 99);  // 99 rows of data, a header saying 100
    claims_more[16 + 7] = 100;
    const std::uint32_t crc = static_cast<std::uint32_t>(crc32(0, claims_more.data() + 12, 17));
    for (int i = 0; i < 4; ++i)
        claims_more[29 + i] = static_cast<std::uint8_t>(crc >> (24 - 8 * i));
    CHECK_THROWS_WITH(decode_png(claims_more.data(), claims_more.size(), "short.png"),
                      "short.png: truncated or corrupt PNG data (not enough image data for its "
                      "100x100 pixels)");
}

TEST_CASE("png reader: the header's size is refused before the image is allocated", "[io][png]") {
    const Bytes png = black(300, 200);
    ReadOptions options;
    options.max_pixels = 300 * 200 - 1;
    bool accepted = false;
    options.accepted = [&accepted](const ImageShape&) { accepted = true; };
    CHECK_THROWS_WITH(decode_png(png.data(), png.size(), "x.png", options),
                      "x.png: 300x200 pixels is more than --max-pixels 59999 (raise it, or 0 for "
                      "no limit)");
    CHECK_FALSE(accepted);

    // The memory check: what goes beside the image is more than any machine has.
    options.max_pixels = 0;
    options.bytes_beside = [](const ImageShape&) { return std::uint64_t{1} << 62; };
    CHECK_THROWS_WITH(decode_png(png.data(), png.size(), "x.png", options),
                      Catch::StartsWith("x.png: 300x200 gray needs about 4.6 EB, ") &&
                          Contains(" available"));
    CHECK_FALSE(accepted);

    options.bytes_beside = nullptr;
    ImageShape told;
    options.accepted = [&told](const ImageShape& shape) { told = shape; };
    CHECK(decode_png(png.data(), png.size(), "x.png", options).size() == cv::Size(300, 200));
    CHECK(told.width == 300);
    CHECK(told.height == 200);
    CHECK(told.channels == 1);
    CHECK(told.pixel_bytes == 1);
}

TEST_CASE("png reader: a decode stops when asked, between rows", "[io][png]") {
    // Two million rows: long enough that the request comes in the middle.
    const Bytes tall = black(1, 2'000'000);
    ReadOptions options;
    int polls = 0;
    options.cancelled = [&polls] { return ++polls == 10; };
    CHECK_THROWS_AS(decode_png(tall.data(), tall.size(), "tall.png", options), Cancelled);
    CHECK(polls == 10);
}

TEST_CASE("png reader: damaged files fail with libpng's words, and nothing is printed",
          "[io][png]") {
    const Bytes png = write_png({37, 23, PNG_COLOR_TYPE_RGB, 8, false, false}, 5);
    Bytes flipped = png;
    flipped[png.size() / 2] ^= 0x55;
    CHECK_THROWS_WITH(decode_png(flipped.data(), flipped.size(), "f.png"),
                      Catch::StartsWith("f.png: truncated or corrupt PNG data (libpng: "));
    const Bytes cut(png.begin(), png.begin() + static_cast<std::ptrdiff_t>(png.size() / 2));
    CHECK_THROWS_WITH(decode_png(cut.data(), cut.size(), "cut.png"),
                      Catch::StartsWith("cut.png: truncated or corrupt PNG data ("));
    const Bytes nothing = {0x89, 'P', 'N', 'G'};
    CHECK_THROWS_WITH(decode_png(nothing.data(), nothing.size(), "n.png"),
                      "n.png: truncated or corrupt PNG data (it ends before its image data)");
    CHECK_THROWS_AS(decode_png(nullptr, 0, "empty.png"), WorkError);
}

}  // namespace cudaconv
