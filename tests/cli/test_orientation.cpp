// A JPEG as a camera held sideways writes it: turned upright on reading by
// default, as `convert -auto-orient` and cv::imread do, and kept as stored
// with --no-auto-orient.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include "support/exif_jpeg.hpp"
#include "support/files.hpp"
#include "support/json_lines.hpp"
#include "support/run_command.hpp"

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
