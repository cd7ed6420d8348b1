#pragma once
// Row-by-row copies between an image's rows and pinned staging, on several
// cores. A batch's GPU thread stages every image in and out (36 MB each way
// for 12 megapixels of RGB): on one core those copies, not the GPU, bounded
// the batch (docs/PERFORMANCE.md, issue 6).
#include <cstddef>
#include <cstdint>

namespace cudaconv {

// rows rows of row_bytes bytes, from src (rows src_step apart) to dst (rows
// dst_step apart). Large copies are split in bands over OpenCV's threads.
void copy_rows(std::byte* dst, std::size_t dst_step, const std::byte* src, std::size_t src_step,
               std::size_t row_bytes, std::int64_t rows);

}  // namespace cudaconv
