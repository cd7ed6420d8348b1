// PNG rows compressed on the device (kernels/codecs/png_deflate.hpp), inflated by
// libdeflate (which checks the stream's Adler-32) and unfiltered here,
// against the image's bytes in PNG's order: every depth and channel count,
// sizes from 1x1 to rows wider than a block, content that takes literals,
// runs and stored blocks (one stored block over several 65535-byte chunks);
// the sample rows as the stream holds them; the files OpenCV reads back;
// and an edge map no larger than the CPU writer's. Without a device these
// tests print "SKIPPED: no CUDA device" and CTest reports them as skipped.
#include <catch2/catch.hpp>

#include <cuda_runtime.h>
#include <libdeflate.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "io/png_encoder.hpp"
#include "kernels/runtime/cuda_check.hpp"
#include "kernels/runtime/cuda_resources.hpp"
#include "kernels/codecs/png_deflate.hpp"
#include "support/device_image.hpp"
#include "support/skip_without_device.hpp"
#include "support/source_dir.hpp"

namespace cudaconv::test {
namespace {

// The image on the device with rows `pad` bytes longer than its pixels
// (as the CUDA variants pad theirs), compressed there.
DevicePngStream compress_on_device(const cv::Mat& image, const std::vector<int>& sample_rows,
                                   std::size_t pad = 16) {
    const DeviceImage d = device_image(image, pad);
    const Stream stream;
    DevicePngStream out = compress_png_rows(d.rows, sample_rows, stream.get());
    CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    return out;
}

// Row y's bytes in PNG's order: RGB(A) for BGR(A), 16-bit big-endian.
std::vector<std::uint8_t> png_order_row(const cv::Mat& image, int y) {
    std::vector<std::uint8_t> out;
    const int c = image.channels();
    for (int x = 0; x < image.cols; ++x) {
        for (int k = 0; k < c; ++k) {
            const int from = c >= 3 && k < 3 ? 2 - k : k;
            if (image.depth() == CV_8U) {
                out.push_back(image.ptr<std::uint8_t>(y)[x * c + from]);
            } else {
                const std::uint16_t v = image.ptr<std::uint16_t>(y)[x * c + from];
                out.push_back(static_cast<std::uint8_t>(v >> 8));
                out.push_back(static_cast<std::uint8_t>(v & 0xFF));
            }
        }
    }
    return out;
}

std::vector<std::uint8_t> inflate(const std::vector<std::uint8_t>& zlib, std::size_t size) {
    std::vector<std::uint8_t> out(size + 1);  // one spare: a longer stream fails
    std::size_t got = 0;
    libdeflate_decompressor* d = libdeflate_alloc_decompressor();
    const libdeflate_result r =
        libdeflate_zlib_decompress(d, zlib.data(), zlib.size(), out.data(), out.size(), &got);
    libdeflate_free_decompressor(d);
    REQUIRE(r == LIBDEFLATE_SUCCESS);
    REQUIRE(got == size);
    out.resize(got);
    return out;
}

// Checks the stream and sample against the image; returns the filtered
// rows (each after its filter byte) as the stream holds them.
std::vector<std::uint8_t> check_stream(const cv::Mat& image, const DevicePngStream& s,
                                       const std::vector<int>& sample_rows) {
    const std::size_t stride = image.cols * image.elemSize() + 1;
    const std::vector<std::uint8_t> rows = inflate(s.zlib, stride * image.rows);
    std::vector<std::uint8_t> above(stride - 1, 0);
    for (int y = 0; y < image.rows; ++y) {
        const std::uint8_t* r = rows.data() + y * stride;
        INFO("row " << y << " of " << image.cols << "x" << image.rows << ", filter " << int(r[0]));
        REQUIRE((r[0] == 0 || r[0] == 2));
        std::vector<std::uint8_t> got(r + 1, r + stride);
        if (r[0] == 2) {
            for (std::size_t i = 0; i < got.size(); ++i)
                got[i] = static_cast<std::uint8_t>(got[i] + above[i]);
        }
        const std::vector<std::uint8_t> want = png_order_row(image, y);
        REQUIRE(got == want);
        above = want;
    }
    REQUIRE(s.sample.size() == sample_rows.size() * stride);
    for (std::size_t k = 0; k < sample_rows.size(); ++k) {
        INFO("sample row " << sample_rows[k]);
        CHECK(std::memcmp(s.sample.data() + k * stride, rows.data() + sample_rows[k] * stride,
                          stride) == 0);
    }
    return rows;
}

cv::Mat random_image(int width, int height, int type, unsigned seed) {
    cv::Mat m(height, width, type);
    cv::RNG rng(seed);
    rng.fill(m, cv::RNG::UNIFORM, 0, CV_MAT_DEPTH(type) == CV_8U ? 256 : 65536);
    return m;
}

// Sparse dots on black, with flat stretches and a ramp: literals, runs of
// every length and repeated pairs, as an edge map has.
cv::Mat sparse_image(int width, int height, int type, unsigned seed) {
    cv::Mat m = cv::Mat::zeros(height, width, type);
    std::mt19937 gen(seed);
    const int bytes = static_cast<int>(m.total() * m.elemSize());
    std::uint8_t* p = m.data;
    for (int i = 0; i < bytes; ++i) {
        const unsigned r = gen() % 100;
        if (r < 8) p[i] = static_cast<std::uint8_t>(gen());
        else if (r < 10) p[i] = static_cast<std::uint8_t>(i % 7);
    }
    // A flat band and a ramp across the middle rows.
    for (int y = height / 3; y < height / 3 + std::max(1, height / 10); ++y) {
        std::uint8_t* row = m.ptr<std::uint8_t>(y);
        const int row_bytes = static_cast<int>(width * m.elemSize());
        for (int i = 0; i < row_bytes; ++i)
            row[i] = static_cast<std::uint8_t>(y < height / 3 + 2 ? 200 : i / 3);
    }
    return m;
}

}  // namespace

TEST_CASE("PNG rows on the device inflate to the image, every depth, channel count and size",
          "[gpu][png-deflate]") {
    if (skip_without_device()) return;
    struct Shape {
        int width, height;
    };
    // 1x1, a row each, a column, rows around a block's 64 KB, rows wider
    // than a block (one row a block), many blocks.
    const Shape shapes[] = {{1, 1},    {2, 1},    {1, 37},    {7, 5},     {33, 17},  {640, 427},
                            {5461, 4}, {5462, 9}, {21846, 3}, {30000, 2}, {257, 600}};
    int cases = 0;
    for (const Shape& shape : shapes) {
        for (int depth : {CV_8U, CV_16U}) {
            for (int channels : {1, 3, 4}) {
                const int type = CV_MAKETYPE(depth, channels);
                for (int content = 0; content < 3; ++content) {
                    const unsigned seed = static_cast<unsigned>(cases);
                    const cv::Mat image =
                        content == 0   ? random_image(shape.width, shape.height, type, seed)
                        : content == 1 ? sparse_image(shape.width, shape.height, type, seed)
                                       : cv::Mat(shape.height, shape.width, type,
                                                 cv::Scalar::all(depth == CV_8U ? 77 : 4000));
                    INFO(shape.width << "x" << shape.height << " depth " << depth << " channels "
                                     << channels << " content " << content);
                    const std::vector<int> sample = png_sample_rows(image.rows);
                    check_stream(image, compress_on_device(image, sample), sample);
                    ++cases;
                }
            }
        }
    }
    CHECK(cases == 11 * 2 * 3 * 3);
}

TEST_CASE("PNG rows on the device: a stored block over several 65535-byte chunks",
          "[gpu][png-deflate]") {
    if (skip_without_device()) return;
    // One row of 150000 random bytes (a block alone, 3 stored chunks), then
    // rows of runs: the stored block's bytes sit between coded blocks.
    cv::Mat image = random_image(50000, 3, CV_8UC3, 11);
    image.row(1).setTo(cv::Scalar::all(9));
    image.row(2).setTo(cv::Scalar::all(9));
    const std::vector<int> sample = png_sample_rows(image.rows);
    const DevicePngStream s = compress_on_device(image, sample);
    check_stream(image, s, sample);
    // Random bytes stored: the stream is not much larger than them.
    CHECK(s.zlib.size() < 150001 + 3 * 5 + 2000);
}

// In the sanitizers' quick set (scripts/gpu/check.sh).
TEST_CASE("PNG rows on the device make files OpenCV reads back pixel for pixel",
          "[gpu][png-deflate][gpu-quick]") {
    if (skip_without_device()) return;
    int cases = 0;
    for (int type : {CV_8UC1, CV_8UC3, CV_8UC4, CV_16UC1, CV_16UC3, CV_16UC4}) {
        for (const cv::Mat& image :
             {random_image(301, 203, type, 5), sparse_image(1200, 90, type, 6)}) {
            const std::vector<int> sample = png_sample_rows(image.rows);
            const DevicePngStream s = compress_on_device(image, sample);
            const std::vector<std::uint8_t> file =
                png_from_runs_stream(image.cols, image.rows, static_cast<int>(image.elemSize1()),
                                     image.channels(), s.zlib, s.sample);
            const cv::Mat back = cv::imdecode(file, cv::IMREAD_UNCHANGED);
            REQUIRE(back.type() == image.type());
            CHECK(cv::norm(back, image, cv::NORM_INF) == 0);
            ++cases;
        }
    }
    CHECK(cases == 12);
}

TEST_CASE("PNG rows on the device: an edge map no larger than the CPU writer makes it",
          "[gpu][png-deflate]") {
    if (skip_without_device()) return;
    // The checkout, where the GPU machine's copy of it is not the build's.
    const std::string root = cudaconv::test::source_dir().string();
    const cv::Mat photo = cv::imread(root + "/images/rocket.jpg", cv::IMREAD_COLOR);
    REQUIRE(!photo.empty());
    cv::Mat big;
    cv::resize(photo, big, cv::Size(4000, 3000), 0, 0, cv::INTER_CUBIC);
    cv::Mat edges;
    const cv::Mat kernel = (cv::Mat_<float>(3, 3) << -1, -1, -1, -1, 8, -1, -1, -1, -1);
    cv::filter2D(big, edges, CV_8U, kernel);
    for (const cv::Mat* image : {&big, &edges}) {
        const std::vector<int> sample = png_sample_rows(image->rows);
        const DevicePngStream s = compress_on_device(*image, sample);
        check_stream(*image, s, sample);
        const std::vector<std::uint8_t> cpu = encode_png(*image, 1);
        INFO((image == &big ? "photo" : "edge map")
             << ": device stream " << s.zlib.size() << " bytes, CPU file " << cpu.size());
        CHECK(static_cast<double>(s.zlib.size()) <= 1.02 * static_cast<double>(cpu.size()));
    }
}

}  // namespace cudaconv::test
