// NumPy's .npy as an image file: written as NumPy's image libraries hold
// colours (RGB), read back to the same image, filtered as the same image in
// any other format, and every malformed array one error line naming the
// file, with nothing written.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <opencv2/imgcodecs.hpp>

#include "io/npy.hpp"
#include "support/files.hpp"
#include "support/run_command.hpp"

namespace cudaconv::test {
namespace fs = std::filesystem;

namespace {

NpyArray read_npy(const fs::path& path) {
    const std::string bytes = read_bytes(path);
    return parse_npy(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
}

void write_npy(const fs::path& path, const std::vector<std::int64_t>& shape,
               const std::vector<float>& data) {
    const std::vector<std::uint8_t> file = encode_npy(shape, data.data());
    write_file(path, std::string(file.begin(), file.end()));
}

}  // namespace

TEST_CASE("npy: a colour image is written RGB, and reads back the same", "[cli][npy]") {
    TempDir dir;
    copy_sample("chelsea-crop.png", dir / "in.png");
    // identity with --depth f32: the image's samples as floats (-f none
    // keeps the depth, which .npy does not hold for u8).
    const auto r =
        run_cudaconv({"in.png", "-f", "identity", "--depth", "f32", "-o", "a.npy"}, dir.path());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const cv::Mat png = cv::imread((dir / "in.png").string(), cv::IMREAD_UNCHANGED);
    const NpyArray a = read_npy(dir / "a.npy");
    REQUIRE(a.shape == std::vector<std::int64_t>{png.rows, png.cols, 3});
    for (int y = 0; y < png.rows; ++y) {
        for (int x = 0; x < png.cols; ++x) {
            const cv::Vec3b bgr = png.at<cv::Vec3b>(y, x);
            const float* rgb = &a.data[(static_cast<std::size_t>(y) * png.cols + x) * 3];
            CHECK(rgb[0] == bgr[2]);
            CHECK(rgb[2] == bgr[0]);
        }
    }
    // Read back and written again: the same array, byte for byte.
    REQUIRE(run_cudaconv({"a.npy", "-f", "identity", "-o", "b.npy"}, dir.path()).exit_code == 0);
    CHECK(read_bytes(dir / "a.npy") == read_bytes(dir / "b.npy"));
    // Filtered from the .npy as from the PNG.
    REQUIRE(run_cudaconv({"in.png", "-f", "gaussian:5", "--depth", "f32", "-o", "from-png.npy"},
                         dir.path())
                .exit_code == 0);
    REQUIRE(
        run_cudaconv({"a.npy", "-f", "gaussian:5", "-o", "from-npy.npy"}, dir.path()).exit_code ==
        0);
    CHECK(read_bytes(dir / "from-png.npy") == read_bytes(dir / "from-npy.npy"));
}

TEST_CASE("npy: a gray (H, W) array is a one-channel image", "[cli][npy]") {
    TempDir dir;
    std::vector<float> data(6 * 5);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i) * 0.25f;
    write_npy(dir / "g.npy", {6, 5}, data);
    const auto r = run_cudaconv(
        {"g.npy", "-f", "identity", "--scale", "4", "--depth", "u8", "-o", "g.png"}, dir.path());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const cv::Mat png = cv::imread((dir / "g.png").string(), cv::IMREAD_UNCHANGED);
    REQUIRE(png.type() == CV_8UC1);
    CHECK(png.at<std::uint8_t>(5, 4) == 29);
}

TEST_CASE("npy: malformed arrays are one line naming the file, nothing written", "[cli][npy]") {
    TempDir dir;
    const std::vector<float> five(2 * 2 * 5, 1.0f);
    write_npy(dir / "five.npy", {2, 2, 5}, five);
    write_npy(dir / "two.npy", {2, 2, 2}, std::vector<float>(2 * 2 * 2, 1.0f));
    const std::vector<float> gray(4 * 4, 1.0f);
    std::vector<std::uint8_t> good = encode_npy({4, 4}, gray.data());
    write_file(dir / "truncated.npy", std::string(good.begin(), good.end() - 3));
    std::string f8(good.begin(), good.end());
    f8.replace(f8.find("<f4"), 3, "<f8");
    write_file(dir / "f8.npy", f8);
    std::string fortran(good.begin(), good.end());
    fortran.replace(fortran.find("False"), 5, "True ");
    write_file(dir / "fortran.npy", fortran);
    write_file(dir / "header.npy", std::string("\x93NUMPY\x01\x00\xff\xff{", 11));
    const std::vector<std::pair<std::string, std::string>> cases{
        {"five.npy", "five.npy: an array of 5 channels (cudaconv reads 1, 3 or 4 channels)"},
        {"two.npy", "two.npy: an array of 2 channels (cudaconv reads 1, 3 or 4 channels)"},
        {"truncated.npy", "truncated.npy: cannot decode NPY data: 61 bytes of data where the "
                          "shape needs 64 (truncated)"},
        {"f8.npy", "f8.npy: cannot decode NPY data: dtype '<f8': only float32 ('<f4') is read"},
        {"fortran.npy", "fortran.npy: cannot decode NPY data: Fortran (column-major) order"},
        {"header.npy", "header.npy: cannot decode NPY data: truncated in its header"},
    };
    for (const auto& [input, says] : cases) {
        const auto r = run_cudaconv({input, "-f", "box:3", "-o", "out.npy"}, dir.path());
        INFO(input << ": " << r.err);
        CHECK(r.exit_code == 1);
        CHECK(r.err.find(says) != std::string::npos);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK_FALSE(fs::exists(dir / "out.npy"));
    }
}

}  // namespace cudaconv::test
