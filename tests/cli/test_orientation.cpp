// A JPEG as a camera held sideways writes it: turned upright on reading by
// default, as `convert -auto-orient` and cv::imread do, and kept as stored
// with --no-auto-orient; its EXIF block and ICC profile carried into JPEG,
// PNG and TIFF outputs.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include "io/exif_orientation.hpp"
#include "io/metadata.hpp"
#include "support/exif_jpeg.hpp"
#include "support/files.hpp"
#include "support/json_lines.hpp"
#include "support/run_command.hpp"
#if CUDACONV_WITH_EXIV2
#include "support/tiff_tags.hpp"
#endif

namespace cudaconv::test {
namespace fs = std::filesystem;

TEST_CASE("orientation: a JPEG tagged RightTop comes out upright", "[cli][orientation]") {
    TempDir dir;
    const cv::Mat photo = cv::imread(sample("chelsea.png"), cv::IMREAD_COLOR);  // 451x300
    REQUIRE(photo.cols == 451);
    const auto jpeg = jpeg_with_segment(photo, exif_segment(6));  // RightTop
    write_file(dir / "turned.jpg", std::string(jpeg.begin(), jpeg.end()));
    const cv::Mat oracle = cv::imread((dir / "turned.jpg").string(), cv::IMREAD_COLOR);
    REQUIRE(oracle.cols == 300);

    const auto r = run_cudaconv(
        {"turned.jpg", "-f", "identity", "-k", "cpu", "--json", "-", "-o", "upright.png"},
        dir.path());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const cv::Mat upright = cv::imread((dir / "upright.png").string(), cv::IMREAD_UNCHANGED);
    REQUIRE(upright.size() == oracle.size());
    CHECK(cv::norm(upright, oracle, cv::NORM_INF) == 0);
    const auto line = json_by_input(r.out).at("turned.jpg");
    CHECK(line["image"]["width"] == 300);
    CHECK(line["image"]["height"] == 451);

    const auto kept = run_cudaconv(
        {"turned.jpg", "-f", "identity", "-k", "cpu", "--no-auto-orient", "-o", "stored.png"},
        dir.path());
    INFO(kept.err);
    REQUIRE(kept.exit_code == 0);
    const cv::Mat stored = cv::imread((dir / "stored.png").string(), cv::IMREAD_UNCHANGED);
    CHECK(stored.cols == 451);
    CHECK(stored.rows == 300);

    // -k auto (the one-image rule reads the header first) and a filter
    // that is not symmetric under the turn: the same as filtering the
    // upright image.
    write_file(dir / "upright-in.png", read_bytes(dir / "upright.png"));
    for (const char* kernel : {"auto", "cpu-ref"}) {
        INFO(kernel);
        const auto a = run_cudaconv(
            {"turned.jpg", "-f", "sobel-x", "-k", kernel, "-o", std::string(kernel) + "-a.png"},
            dir.path());
        const auto b = run_cudaconv(
            {"upright-in.png", "-f", "sobel-x", "-k", kernel, "-o", std::string(kernel) + "-b.png"},
            dir.path());
        REQUIRE(a.exit_code == 0);
        REQUIRE(b.exit_code == 0);
        CHECK(read_bytes(dir / (std::string(kernel) + "-a.png")) ==
              read_bytes(dir / (std::string(kernel) + "-b.png")));
    }
}

}  // namespace cudaconv::test

namespace cudaconv::test {

// A camera's JPEG: its EXIF block and ICC profile reach the JPEG and PNG
// outputs, the orientation marked upright since the pixels were turned;
// --strip leaves them out.
TEST_CASE("orientation: EXIF and the ICC profile are kept, marked upright", "[cli][orientation]") {
    TempDir dir;
    ImageMetadata in;
    in.icc.resize(70'000);  // two APP2 segments
    for (std::size_t i = 0; i < in.icc.size(); ++i) in.icc[i] = static_cast<std::uint8_t>(i * 7);
    const cv::Mat photo = cv::imread(sample("chelsea.png"), cv::IMREAD_COLOR);
    const auto camera = with_metadata(jpeg_with_segment(photo, exif_segment(6)), ".jpg", in);
    write_file(dir / "camera.jpg", std::string(camera.begin(), camera.end()));
    const auto orientation = [](const ImageMetadata& m) {
        std::vector<std::uint8_t> payload = {'E', 'x', 'i', 'f', 0, 0};
        payload.insert(payload.end(), m.exif.begin(), m.exif.end());
        return exif_orientation(payload.data(), payload.size());
    };
    for (const char* out : {"out.jpg", "out.png", "none.png"}) {
        INFO(out);
        const std::string filter = std::string(out) == "none.png" ? "none" : "edge";
        const auto r = run_cudaconv({"camera.jpg", "-f", filter, "-o", out}, dir.path());
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        const std::string bytes = read_bytes(dir / out);
        const ImageMetadata m =
            read_metadata(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
        CHECK(m.icc == in.icc);
        CHECK(orientation(m) == 1);
        CHECK(cv::imread((dir / out).string(), cv::IMREAD_UNCHANGED).cols == 300);
    }
    const auto stripped =
        run_cudaconv({"camera.jpg", "-f", "edge", "--strip", "-o", "strip.jpg"}, dir.path());
    REQUIRE(stripped.exit_code == 0);
    const std::string bytes = read_bytes(dir / "strip.jpg");
    CHECK(read_metadata(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()).empty());
    // Kept as stored, the orientation stays as the camera wrote it.
    REQUIRE(run_cudaconv({"camera.jpg", "-f", "edge", "--no-auto-orient", "-o", "stored.jpg"},
                         dir.path())
                .exit_code == 0);
    const std::string stored = read_bytes(dir / "stored.jpg");
    CHECK(orientation(read_metadata(reinterpret_cast<const std::uint8_t*>(stored.data()),
                                    stored.size())) == 6);
}

}  // namespace cudaconv::test

#if CUDACONV_WITH_EXIV2
namespace cudaconv::test {

// The same camera's JPEG written as TIFF: the profile and the EXIF tags
// (IFD0's, the Exif and GPS directories') in the TIFF's own tags, the
// orientation marked upright; --strip leaves them out; and the image is
// stored exactly as it is without them.
TEST_CASE("orientation: a TIFF output keeps the profile and the EXIF tags", "[cli][orientation]") {
    TempDir dir;
    ImageMetadata in;
    in.exif = camera_exif(6);
    in.icc.resize(70'000);
    for (std::size_t i = 0; i < in.icc.size(); ++i) in.icc[i] = static_cast<std::uint8_t>(i * 5);
    const cv::Mat photo = cv::imread(sample("chelsea.png"), cv::IMREAD_COLOR);
    std::vector<std::uint8_t> plain;
    REQUIRE(cv::imencode(".jpg", photo, plain));
    const auto camera = with_metadata(plain, ".jpg", in);
    write_file(dir / "camera.jpg", std::string(camera.begin(), camera.end()));
    const auto tags_of = [&](const std::string& name) {
        const std::string bytes = read_bytes(dir / name);
        return read_tiff_tags(std::vector<std::uint8_t>(bytes.begin(), bytes.end()));
    };
    const auto run = [&](std::vector<std::string> args) {
        args.insert(args.begin(), "camera.jpg");
        const auto r = run_cudaconv(args, dir.path());
        INFO(r.err);
        CHECK(r.err.empty());
        REQUIRE(r.exit_code == 0);
    };

    for (const char* out : {"edge.tif", "none.tiff"}) {
        INFO(out);
        run({"-f", std::string(out) == "edge.tif" ? "edge" : "none", "-o", out});
        const TiffTags t = tags_of(out);
        REQUIRE(t.opened);
        CHECK(t.layout.width == 300);  // turned upright
        CHECK(t.icc == in.icc);
        CHECK(t.make == "cudaconv-cam");
        CHECK(t.model == "model-1");
        CHECK(t.orientation == 1);
        CHECK(t.exposure_time == Approx(1.0 / 250));
        CHECK(t.date_time_original == "2024:05:06 07:08:09");
        CHECK(t.gps_latitude_ref == "N");
        CHECK(t.directories == 1);
    }

    run({"-f", "none", "--strip", "-o", "stripped.tif"});
    const TiffTags stripped = tags_of("stripped.tif");
    REQUIRE(stripped.opened);
    CHECK(stripped.icc.empty());
    CHECK(stripped.make.empty());
    CHECK(stripped.orientation == 0);
    CHECK_FALSE(stripped.has_exif);
    CHECK_FALSE(stripped.has_gps);
    // With or without metadata, the same image, stored the same.
    CHECK(tags_of("none.tiff").layout == stripped.layout);
    const cv::Mat kept = cv::imread((dir / "none.tiff").string(), cv::IMREAD_UNCHANGED);
    const cv::Mat bare = cv::imread((dir / "stripped.tif").string(), cv::IMREAD_UNCHANGED);
    REQUIRE(kept.size() == bare.size());
    CHECK(cv::norm(kept, bare, cv::NORM_INF) == 0);

    // Kept as stored, the orientation stays as the camera wrote it.
    run({"-f", "edge", "--no-auto-orient", "-o", "stored.tif"});
    const TiffTags stored = tags_of("stored.tif");
    CHECK(stored.layout.width == 451);
    CHECK(stored.orientation == 6);
    CHECK(stored.icc == in.icc);
}

}  // namespace cudaconv::test
#endif
