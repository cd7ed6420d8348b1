#pragma once
// The block a decoded image lives in, a little larger than its pixels.
// Freed, it is kept in the heap (batch/heap_reuse.hpp) for the next
// image-sized request, and the largest that follows a decode is the PNG
// encoder's filtered rows: the pixels plus a byte a row. Without the slack
// whether the freed block could hold them depended on the few bytes free
// beside it in the heap, which any small allocation elsewhere moves: a
// 12-megapixel PNG output then took 8,700 fresh pages (8-16 ms) instead of
// none.
#include <cstddef>

#include <opencv2/core.hpp>

namespace cudaconv {

// A rows x cols Mat of `type`, continuous, at the start of a block with
// at least `rows` bytes more.
inline cv::Mat image_with_slack(int rows, int cols, int type) {
    const std::size_t row_bytes = static_cast<std::size_t>(cols) * CV_ELEM_SIZE(type);
    const int extra =
        row_bytes == 0 ? 1 : static_cast<int>(static_cast<std::size_t>(rows) / row_bytes) + 1;
    cv::Mat block(rows + extra, cols, type);
    return block.rowRange(0, rows);
}

}  // namespace cudaconv
