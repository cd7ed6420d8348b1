// io/metadata.hpp: EXIF and ICC read from JPEG and PNG files, spliced into
// encoded outputs and read back the same, the orientation marked upright,
// and malformed blocks left out without failing.
#include <catch2/catch.hpp>

#include <cstring>
#include <random>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include "io/exif_orientation.hpp"
#include "io/image_io.hpp"
#include "io/metadata.hpp"
#include "support/exif_jpeg.hpp"

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
    // Other formats get none; an empty set changes nothing.
    const Bytes tif = encoded(".png");
    CHECK(with_metadata(tif, ".tif", m) == tif);
    CHECK(with_metadata(tif, ".png", ImageMetadata{}) == tif);
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

TEST_CASE("metadata: read from a camera-style JPEG; malformed blocks left out", "[metadata]") {
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

}  // namespace cudaconv
