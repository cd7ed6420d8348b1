// Fuzz target: tiff_with_metadata (io/tiff_metadata.hpp), which hands an
// input file's EXIF block and ICC profile to Exiv2 to write into a TIFF
// output. The input's first two bytes (little-endian) say how many of the
// rest are the EXIF block; the others are the profile. Into small TIFFs
// OpenCV wrote (u8 colour, u16 gray): the result is a TIFF that OpenCV
// decodes to the same pixels, whatever the block holds; never a crash or
// an exception.
#include <cstddef>
#include <cstdint>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include "checks.hpp"
#include "io/tiff_metadata.hpp"

namespace {

struct Tiff {
    cv::Mat image;
    std::vector<std::uint8_t> file;
};

const std::vector<Tiff>& tiffs() {
    static const std::vector<Tiff> made = [] {
        std::vector<Tiff> out;
        cv::Mat colour(5, 7, CV_8UC3), gray(4, 6, CV_16UC1);
        cv::randu(colour, 0, 255);
        cv::randu(gray, 0, 65535);
        for (const cv::Mat& image : {colour, gray}) {
            std::vector<std::uint8_t> file;
            FUZZ_CHECK(cv::imencode(".tif", image, file), "OpenCV writes no TIFF");
            out.push_back({image, file});
        }
        return out;
    }();
    return made;
}

// `image` in each of EXIF's eight orientations: as stored, mirrored,
// turned, and their transposes.
std::vector<cv::Mat> orientations(const cv::Mat& image) {
    std::vector<cv::Mat> out;
    for (const cv::Mat& base : {image, cv::Mat(image.t())}) {
        out.push_back(base);
        for (int code : {0, 1, -1}) {
            cv::Mat flipped;
            cv::flip(base, flipped, code);
            out.push_back(flipped);
        }
    }
    return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 2) return 0;
    const std::size_t rest = size - 2;
    const std::size_t exif_bytes = std::min<std::size_t>(data[0] | std::size_t{data[1]} << 8, rest);
    cudaconv::ImageMetadata metadata;
    metadata.exif.assign(data + 2, data + 2 + exif_bytes);
    metadata.icc.assign(data + 2 + exif_bytes, data + size);
    for (const Tiff& tiff : tiffs()) {
        const std::vector<std::uint8_t> out = cudaconv::tiff_with_metadata(tiff.file, metadata);
        const cv::Mat back = cv::imdecode(out, cv::IMREAD_UNCHANGED);
        FUZZ_CHECK(!back.empty(), "the TIFF written (%zu bytes) does not decode", out.size());
        FUZZ_CHECK(back.type() == tiff.image.type(), "the TIFF written decodes to another type");
        // OpenCV's reader turns the pixels by an orientation tag the block
        // carries: the same pixels, in one of the eight orientations.
        bool same = false;
        for (const cv::Mat& turned : orientations(tiff.image)) {
            same = same ||
                   (turned.size() == back.size() && cv::norm(back, turned, cv::NORM_INF) == 0);
        }
        FUZZ_CHECK(same, "the TIFF written decodes to other pixels");
    }
    return 0;
}
