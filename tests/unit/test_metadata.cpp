// io/metadata.hpp: EXIF and ICC read from JPEG and PNG files, spliced into
// encoded outputs and read back the same, the orientation marked upright,
// and malformed blocks left out without failing; in TIFF outputs, the
// profile and the EXIF tags read back with libtiff, the image stored
// exactly as without them.
#include <catch2/catch.hpp>

#include <cstring>
#include <iostream>
#include <random>
#include <thread>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include "io/exif_orientation.hpp"
#include "io/image_io.hpp"
#include "io/metadata.hpp"
#include "support/exif_jpeg.hpp"
#if CUDACONV_WITH_EXIV2
#include "support/tiff_tags.hpp"
#endif

namespace cudaconv {
namespace {

using Bytes = std::vector<std::uint8_t>;

// A made-up profile of `size` bytes (a real one's content does not matter
// to carrying it).
Bytes profile(std::size_t size) {
    Bytes p(size);
    std::mt19937 rng(7);
    for (auto& b : p) b = static_cast<std::uint8_t>(rng());
    return p;
}

// The EXIF test block: test::exif_segment's payload after "Exif\0\0".
Bytes exif_tiff(int orientation, bool big_endian = false) {
    const Bytes segment = test::exif_segment(orientation, big_endian);
    return Bytes(segment.begin() + 4 + 6, segment.end());
}

Bytes encoded(const std::string& ext) {
    cv::Mat image(20, 30, CV_8UC3, cv::Scalar(10, 120, 240));
    Bytes bytes;
    REQUIRE(cv::imencode(ext, image, bytes));
    return bytes;
}

int orientation_of(const Bytes& tiff) {
    Bytes payload = {'E', 'x', 'i', 'f', 0, 0};
    payload.insert(payload.end(), tiff.begin(), tiff.end());
    return exif_orientation(payload.data(), payload.size());
}

}  // namespace

TEST_CASE("metadata: EXIF and a multi-segment ICC profile round-trip through JPEG and PNG",
          "[metadata]") {
    ImageMetadata m;
    m.exif = exif_tiff(6);
    m.icc = profile(150'000);  // three APP2 segments in a JPEG
    for (const char* ext : {".jpg", ".png"}) {
        INFO(ext);
        const Bytes file = with_metadata(encoded(ext), ext, m);
        const ImageMetadata back = read_metadata(file.data(), file.size());
        CHECK(back.exif == m.exif);
        CHECK(back.icc == m.icc);
        // Still an image every reader decodes.
        const cv::Mat decoded = cv::imdecode(file, cv::IMREAD_UNCHANGED);
        CHECK(decoded.cols == 30);
    }
    // Other formats get none, nor a file that is not what its extension
    // says; an empty set changes nothing.
    const Bytes png = encoded(".png");
    CHECK(with_metadata(png, ".bmp", m) == png);
    CHECK(with_metadata(png, ".tif", m) == png);
    CHECK(with_metadata(png, ".png", ImageMetadata{}) == png);
}

TEST_CASE("metadata: the orientation is marked upright, either byte order", "[metadata]") {
    for (const bool big_endian : {false, true}) {
        ImageMetadata m;
        m.exif = exif_tiff(8, big_endian);
        CHECK(orientation_of(m.exif) == 8);
        mark_upright(m);
        CHECK(orientation_of(m.exif) == 1);
    }
    ImageMetadata none;
    none.exif = {'I', 'I', 42, 0, 8, 0, 0, 0, 0, 0};  // a directory without the tag
    const Bytes before = none.exif;
    mark_upright(none);
    CHECK(none.exif == before);
}

TEST_CASE("metadata: read from a camera-style JPEG, malformed blocks left out", "[metadata]") {
    const cv::Mat image(12, 16, CV_8UC3, cv::Scalar(1, 2, 3));
    const Bytes jpeg = test::jpeg_with_segment(image, test::exif_segment(3));
    const ImageMetadata m = read_metadata(jpeg.data(), jpeg.size());
    CHECK(orientation_of(m.exif) == 3);
    CHECK(m.icc.empty());

    // An ICC profile missing one of its segments is left out whole.
    ImageMetadata with_icc;
    with_icc.icc = profile(140'000);
    Bytes file = with_metadata(encoded(".jpg"), ".jpg", with_icc);
    const Bytes marker = {'I', 'C', 'C', '_', 'P', 'R', 'O', 'F', 'I', 'L', 'E', 0, 2};
    const auto second = std::search(file.begin(), file.end(), marker.begin(), marker.end());
    REQUIRE(second != file.end());
    second[11] = 'X';  // no longer an ICC segment
    CHECK(read_metadata(file.data(), file.size()).icc.empty());

    // Cut anywhere: never a crash (the sanitizer build checks the reads).
    const Bytes whole = with_metadata(encoded(".png"), ".png", with_icc);
    for (std::size_t cut = 0; cut < 400; cut += 7) {
        read_metadata(whole.data(), cut);
    }
    const Bytes jpeg_whole = with_metadata(encoded(".jpg"), ".jpg", with_icc);
    for (std::size_t cut = 0; cut < jpeg_whole.size(); cut += 997) {
        read_metadata(jpeg_whole.data(), cut);
    }
    // A PNG's iCCP that does not inflate is left out.
    Bytes broken = whole;
    const Bytes iccp = {'i', 'C', 'C', 'P'};
    const auto at = std::search(broken.begin(), broken.end(), iccp.begin(), iccp.end());
    REQUIRE(at != broken.end());
    at[4 + 20] ^= 0xFF;  // inside the zlib stream
    CHECK(read_metadata(broken.data(), broken.size()).icc.empty());
}

namespace {

// The TIFF test images: each depth a TIFF output holds, 1, 3 and 4
// channels, random samples (fixed seeds) that LZW cannot shrink to nothing.
cv::Mat tiff_image(int type, int seed) {
    cv::Mat image(37, 53, type);
    cv::RNG rng(static_cast<std::uint64_t>(seed));
    const double high = CV_MAT_DEPTH(type) == CV_8U    ? 256
                        : CV_MAT_DEPTH(type) == CV_16U ? 65536
                                                       : 4;
    rng.fill(image, cv::RNG::UNIFORM, CV_MAT_DEPTH(type) == CV_32F ? -high : 0, high);
    return image;
}

bool skip_without_tiff() {
    if (cv::haveImageWriter("x.tif")) return false;
    std::cout << "SKIPPED: this OpenCV has no .tif codec\n";
    return true;
}

}  // namespace

TEST_CASE("metadata: a TIFF output holds the profile and the EXIF tags, its image unchanged",
          "[metadata]") {
    if (skip_without_tiff()) return;
    const int type = GENERATE(CV_8UC3, CV_16UC1, CV_32FC3, CV_8UC4);
    CAPTURE(type);
    const cv::Mat image = tiff_image(type, type + 1);
    const Bytes plain = encode_image(image, ".tif", EncodeOptions{}, "out.tif");  // LZW
    ImageMetadata m;
    m.exif = test::camera_exif(6);
    m.icc = profile(5'000);
    mark_upright(m);
    for (const char* ext : {".tif", ".tiff"}) {
        INFO(ext);
        const Bytes file = with_metadata(plain, ext, m);
        // The pixels OpenCV decodes, as without metadata.
        const cv::Mat decoded = cv::imdecode(file, cv::IMREAD_UNCHANGED);
        REQUIRE(decoded.type() == image.type());
        REQUIRE(decoded.size() == image.size());
        CHECK(cv::norm(decoded, image, cv::NORM_INF) == 0);
#if CUDACONV_WITH_EXIV2
        const test::TiffTags before = test::read_tiff_tags(plain);
        const test::TiffTags after = test::read_tiff_tags(file);
        REQUIRE(after.opened);
        // Size, depth, compression and the compressed strips themselves.
        CHECK(after.layout == before.layout);
        CHECK(after.directories == 1);  // no thumbnail image
        CHECK(after.icc == m.icc);
        CHECK(after.make == "cudaconv-cam");
        CHECK(after.model == "model-1");
        CHECK(after.date_time == "2024:05:06 07:08:09");
        CHECK(after.orientation == 1);
        CHECK(after.has_exif);
        CHECK(after.exposure_time == Approx(1.0 / 250));
        CHECK(after.date_time_original == "2024:05:06 07:08:09");
        CHECK(after.has_gps);
        CHECK(after.gps_latitude_ref == "N");
        CHECK(before.icc.empty());
        CHECK(before.make.empty());
#else
        CHECK(file == plain);  // built without Exiv2: no metadata in a TIFF
#endif
    }
}

TEST_CASE("metadata: a TIFF output keeps what it can of malformed metadata, never failing",
          "[metadata]") {
    if (skip_without_tiff()) return;
    const cv::Mat image = tiff_image(CV_8UC3, 11);
    const Bytes plain = encode_image(image, ".tif", EncodeOptions{}, "out.tif");
    const Bytes camera = test::camera_exif(1);
    std::vector<Bytes> blocks = {
        {'I', 'I', 42, 0, 0xFF, 0xFF, 0xFF, 0x7F},   // its first directory past the end
        {'X', 'X', 42, 0, 8, 0, 0, 0, 0, 0},         // no byte order
        Bytes(camera.begin(), camera.begin() + 40),  // cut inside IFD0
    };
    Bytes wrong_count = camera;  // Make's count past the block
    wrong_count[8 + 2 + 4] = 0xFF;
    wrong_count[8 + 2 + 7] = 0x7F;
    blocks.push_back(wrong_count);
    Bytes noise(300);
    std::mt19937 rng(5);
    for (auto& b : noise) b = static_cast<std::uint8_t>(rng());
    blocks.push_back(noise);
    for (std::size_t i = 0; i < blocks.size(); ++i) {
        CAPTURE(i);
        ImageMetadata m;
        m.exif = blocks[i];
        m.icc = profile(3'000);
        Bytes file;
        REQUIRE_NOTHROW(file = with_metadata(plain, ".tif", m));
        const cv::Mat decoded = cv::imdecode(file, cv::IMREAD_UNCHANGED);
        REQUIRE(decoded.size() == image.size());
        CHECK(cv::norm(decoded, image, cv::NORM_INF) == 0);
#if CUDACONV_WITH_EXIV2
        // What is there is whole: the image as stored, the profile as given.
        const test::TiffTags after = test::read_tiff_tags(file);
        REQUIRE(after.opened);
        CHECK(after.layout == test::read_tiff_tags(plain).layout);
        CHECK(after.icc == m.icc);
#endif
    }
    // The camera's block cut anywhere, or with any byte spoiled: never a
    // throw, never a different image (the sanitizer build checks the reads).
    for (std::size_t at = 0; at < camera.size(); ++at) {
        CAPTURE(at);
        ImageMetadata m;
        m.exif = at % 2 == 0 ? Bytes(camera.begin(), camera.begin() + static_cast<long>(at))
                             : camera;
        if (at % 2 == 1) m.exif[at] ^= 0xFF;
        Bytes file;
        REQUIRE_NOTHROW(file = with_metadata(plain, ".tif", m));
        const cv::Mat decoded = cv::imdecode(file, cv::IMREAD_UNCHANGED);
        REQUIRE(decoded.size() == image.size());
        CHECK(cv::norm(decoded, image, cv::NORM_INF) == 0);
    }
    // A TIFF that Exiv2 cannot take is written as it is.
    Bytes broken = plain;
    broken[4] = broken[5] = broken[6] = 0xFF;  // the first directory past the end
    broken[7] = 0x7F;
    ImageMetadata m;
    m.exif = camera;
    m.icc = profile(3'000);
    Bytes file;
    REQUIRE_NOTHROW(file = with_metadata(broken, ".tif", m));
    CHECK(file == broken);
}

TEST_CASE("metadata: TIFF outputs written on several threads at once are each whole",
          "[metadata]") {
    if (skip_without_tiff()) return;
    // The encode workers of a batch (-j) write their outputs concurrently.
    const cv::Mat image = tiff_image(CV_16UC3, 3);
    const Bytes plain = encode_image(image, ".tif", EncodeOptions{}, "out.tif");
    ImageMetadata m;
    m.exif = test::camera_exif(1);
    m.icc = profile(20'000);
    const Bytes expected = with_metadata(plain, ".tif", m);
    constexpr int kThreads = 4;
    std::vector<int> same(kThreads, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < 25; ++i) same[t] += with_metadata(plain, ".tif", m) == expected;
        });
    }
    for (std::thread& thread : threads) thread.join();
    for (int t = 0; t < kThreads; ++t) CHECK(same[t] == 25);
}

}  // namespace cudaconv
