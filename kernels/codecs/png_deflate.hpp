#pragma once
// A filtered image's PNG rows, compressed on the device (issue 6). A batch
// of filtered images is bound by the workers' PNG encoding, and an edge
// map costs them a third more than the photo it came from; the GPU has the
// output in its memory already and does the same work in about 2 ms (a
// core takes 130 ms for a 12-megapixel edge map). What comes back is IDAT's
// zlib stream, a few MB instead of the image, and the worker only wraps it
// in chunks (png_encoder.hpp).
//
// The stream is the CPU writer's kind (io/run_deflate.hpp): runs only,
// coded as matches at distance 1, with Huffman codes of each block's own.
// A block is a group of whole rows (about 64 KB), filtered None or Up,
// whichever codes it smaller: measured per block, where the CPU writer
// chooses one filter for the image from a sample. Each of 256 threads
// tokenises its own stretch of the block (so runs stop at stretch edges,
// about 256 bytes apart: a run codes at most 258 anyway, and a block's
// first byte is a literal), a block's threads count its symbols under both
// filters, and one thread a filter makes its codes (core/deflate_codes.hpp,
// the CPU writer's definition). From every stretch's size in bits, each
// thread knows where its bits go, and writes them there; a block that
// codes larger than stored is stored. Adler-32 comes from per-block sums.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/types.hpp"
#include "kernels/codecs/device_image_rows.hpp"

namespace cudaconv {

// Whether the device encoder takes such an image: samples PNG holds as
// cudaconv writes them (u8 or u16, 1, 3 or 4 channels), in rows under
// 128 MB (its sizes in bits are counted in 32 bits a block).
bool png_rows_on_device_supported(std::int64_t width, int channels, Depth depth);

struct DevicePngStream {
    std::vector<std::uint8_t> zlib;  // IDAT's stream: header, deflate blocks, Adler-32
    // The filtered rows (filter byte first) named by `sample_rows`, in that
    // order, as the stream holds them.
    std::vector<std::uint8_t> sample;
};

// Compresses the image's PNG rows on `stream` and copies the stream back;
// `sample_rows` are rows to copy back filtered as well (for the writer's
// check of runs against a string search). Device memory is kept on this
// thread between images of one size. Throws CudaError.
DevicePngStream compress_png_rows(const DeviceImageRows& image, const std::vector<int>& sample_rows,
                                  cudaStream_t stream);

// Frees the buffers compress_png_rows keeps on this thread.
void release_png_rows_buffers();

}  // namespace cudaconv
