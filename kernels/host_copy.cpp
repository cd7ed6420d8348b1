#include "kernels/host_copy.hpp"

#include <algorithm>
#include <cstring>

#include <opencv2/core/utility.hpp>

namespace cudaconv {
namespace {

// Below this a copy stays on the calling thread: waking others costs more.
constexpr std::size_t kParallelBytes = std::size_t{4} << 20;
// Bands: enough to spread over a few cores' share of memory bandwidth, not
// so many that they take every core from the batch's encoders.
constexpr int kBands = 8;

void copy_band(std::byte* dst, std::size_t dst_step, const std::byte* src, std::size_t src_step,
               std::size_t row_bytes, std::int64_t first, std::int64_t end) {
    if (dst_step == row_bytes && src_step == row_bytes) {
        std::memcpy(dst + first * dst_step, src + first * src_step,
                    row_bytes * static_cast<std::size_t>(end - first));
        return;
    }
    for (std::int64_t y = first; y < end; ++y) {
        std::memcpy(dst + y * dst_step, src + y * src_step, row_bytes);
    }
}

}  // namespace

void copy_rows(std::byte* dst, std::size_t dst_step, const std::byte* src, std::size_t src_step,
               std::size_t row_bytes, std::int64_t rows) {
    if (rows <= 0) return;
    if (row_bytes * static_cast<std::size_t>(rows) < kParallelBytes) {
        copy_band(dst, dst_step, src, src_step, row_bytes, 0, rows);
        return;
    }
    const int bands = static_cast<int>(std::min<std::int64_t>(kBands, rows));
    cv::parallel_for_(cv::Range(0, bands), [&](const cv::Range& range) {
        for (int b = range.start; b < range.end; ++b) {
            copy_band(dst, dst_step, src, src_step, row_bytes, rows * b / bands,
                      rows * (b + 1) / bands);
        }
    }, bands);
}

}  // namespace cudaconv
