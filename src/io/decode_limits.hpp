#pragma once
// What an image may cost before it is decoded: --max-pixels, and the
// memory its buffers will take (the decoded image and what the caller puts
// beside it) against what this process can still get. Both are checked
// from the header's size, before decoding, wherever the header tells it,
// and from the decoded image otherwise.
#include <cstdint>
#include <functional>
#include <new>
#include <string>

#include <opencv2/core.hpp>

#include "base/errors.hpp"

namespace cudaconv {

// 2^28 pixels, a 16384x16384 image: 768 MB as 8-bit RGB, 2 GB as 16-bit
// RGBA, per copy; far beyond photographs and scans, far below what a
// forged header can claim (2^31 per side in PNG).
constexpr std::uint64_t kDefaultMaxPixels = std::uint64_t{1} << 28;

// An image's size and samples, as its header tells them or as decoded.
struct ImageShape {
    std::int64_t width = 0;
    std::int64_t height = 0;
    int channels = 0;      // 0: the header does not tell
    int sample_bytes = 0;  // 0: the header does not tell
    // What a decoded pixel takes: channels * sample_bytes where told, else
    // the most this format decodes a pixel into.
    int pixel_bytes = 0;

    std::uint64_t pixels() const;
    std::uint64_t bytes() const;  // of the decoded image
};

ImageShape shape_of(const cv::Mat& image);

struct ReadOptions {
    std::uint64_t max_pixels = kDefaultMaxPixels;  // 0: no limit
    // The bytes the caller will allocate for an image of this shape beside
    // the decoded one (its output, the encoder's copies): weighed with it
    // in the memory check. Empty: the decoded image alone.
    std::function<std::uint64_t(const ImageShape&)> bytes_beside;
    // Called once the header's size passed the checks, before the decoder
    // allocates the image: where the caller may start making its own
    // buffers for it. Not called when the header does not tell the size.
    std::function<void(const ImageShape&)> accepted;
    // Polled while decoding where the decoder can stop between pieces (PNG):
    // true abandons the decode with Cancelled.
    std::function<bool()> cancelled;
    // Turn a JPEG upright by its EXIF orientation (--no-auto-orient: off).
    bool auto_orient = true;
};

// Throws WorkError "NAME: problem" when an image of this shape may not be
// decoded: more pixels than max_pixels, or more memory for it and what goes
// beside it than this process can still get. With `decoded` the image is
// in memory already: only what goes beside it is weighed.
void check_shape(const ImageShape& shape, const std::string& name, const ReadOptions& options,
                 bool decoded = false);

// The error for an allocation that failed (std::bad_alloc, OpenCV's
// out-of-memory exception) while working on an image of this shape: the
// same line as check_shape's, with what is available now.
WorkError out_of_memory(const std::string& name, const ImageShape& shape,
                        const ReadOptions& options);

// Whether an OpenCV exception is its allocator failing (alloc.cpp's
// "Failed to allocate N bytes").
bool is_out_of_memory(const cv::Exception& e);

// Returns work(); an allocation that fails in it (std::bad_alloc, OpenCV's
// out-of-memory error) becomes out_of_memory's WorkError.
template <typename Work>
decltype(auto) reporting_out_of_memory(const std::string& name, const ImageShape& shape,
                                       const ReadOptions& options, Work&& work) {
    try {
        return work();
    } catch (const std::bad_alloc&) {
        throw out_of_memory(name, shape, options);
    } catch (const cv::Exception& e) {
        if (is_out_of_memory(e)) throw out_of_memory(name, shape, options);
        throw;
    }
}

}  // namespace cudaconv
