// Fuzz target: decode_png (src/io/png_reader.hpp), cudaconv's own PNG
// reader, on any bytes. It returns an image cudaconv can filter (8- or
// 16-bit, 1, 3 or 4 channels, within --max-pixels) or throws a WorkError of
// one line that starts with the file's name; nothing else. Where OpenCV's
// reader (libpng's whole-file API) decodes the same bytes too, the two
// images are equal sample for sample, as png_reader.hpp promises.
#include <cstddef>
#include <cstdint>
#include <string>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include "checks.hpp"
#include "base/errors.hpp"
#include "io/png_reader.hpp"

namespace {

// Small enough that a forged header's size is refused, not allocated: the
// fuzzer runs in a few hundred MB and must not spend its time on one input.
constexpr std::uint64_t kMaxPixels = std::uint64_t{1} << 22;

bool equal(const cv::Mat& a, const cv::Mat& b) {
    if (a.size() != b.size() || a.type() != b.type()) return false;
    cv::Mat different;
    cv::compare(a.reshape(1), b.reshape(1), different, cv::CMP_NE);
    return cv::countNonZero(different) == 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string name = "in.png";
    cudaconv::ReadOptions options;
    options.max_pixels = kMaxPixels;
    cv::Mat image;
    try {
        image = cudaconv::decode_png(data, size, name, options);
    } catch (const cudaconv::WorkError& e) {
        const std::string message = e.what();
        cudaconv::fuzz::check_message(message);
        FUZZ_CHECK(message.rfind(name + ": ", 0) == 0, "the message does not name the file: %s",
                   message.c_str());
        return 0;
    }
    FUZZ_CHECK(!image.empty(), "an empty image and no error");
    FUZZ_CHECK(image.depth() == CV_8U || image.depth() == CV_16U, "depth %d", image.depth());
    FUZZ_CHECK(image.channels() == 1 || image.channels() == 3 || image.channels() == 4,
               "%d channels", image.channels());
    FUZZ_CHECK(static_cast<std::uint64_t>(image.total()) <= kMaxPixels, "%dx%d past the limit",
               image.cols, image.rows);

    // OpenCV may refuse what the reader takes (it checks ancillary chunks the
    // reader skips), but an image both decode is the same image.
    const cv::Mat bytes(1, static_cast<int>(size), CV_8U, const_cast<std::uint8_t*>(data));
    cv::Mat reference;
    try {
        reference = cv::imdecode(bytes, cv::IMREAD_UNCHANGED);
    } catch (const cv::Exception&) {
        return 0;
    }
    if (!reference.empty()) {
        FUZZ_CHECK(equal(image, reference), "%dx%d type %d, OpenCV %dx%d type %d", image.cols,
                   image.rows, image.type(), reference.cols, reference.rows, reference.type());
    }
    return 0;
}
