#pragma once
// A filtered image encoded as a JPEG file on the GPU by nvJPEG (opened at
// run time, nvjpeg_loader.hpp), with the settings the CPU's writer takes
// (io/jpeg_writer.hpp): quality on libjpeg's scale and the chroma sampling.
// Its colour conversion, DCT and Huffman coding are nvJPEG's own, so the
// file differs from libjpeg's: docs/SPEC.md "Encoder" has the measured
// difference, and tests/unit/test_jpeg_encoder.cpp holds it.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/jpeg_settings.hpp"
#include "core/types.hpp"
#include "kernels/codecs/device_image_rows.hpp"

namespace cudaconv {

// Why the device encoder cannot take such an image, or "" where it can:
// 8-bit samples, 1 or 3 channels, sides of 1 to 65500 pixels (libjpeg's limit), and
// nvJPEG loaded.
std::string jpeg_on_device_problem(std::int64_t width, std::int64_t height, int channels,
                                   Depth depth);

// Encodes the image on `stream` and returns the file, once the stream has
// finished it. The nvJPEG handle and its buffers are kept on this thread
// for the next image. Throws CudaError (out of memory as
// cudaErrorMemoryAllocation, which frees what was kept).
std::vector<std::uint8_t> encode_jpeg_on_device(const DeviceImageRows& image,
                                                const JpegSettings& settings, cudaStream_t stream);

// Frees what encode_jpeg_on_device keeps on this thread.
void release_jpeg_encoder();

// Whether this thread's encoder (made by encode_jpeg_on_device, kept until
// release_jpeg_encoder) took the handle of its device's JPEG decoder
// (nvjpeg_handle.hpp) rather than make one: for tests.
bool jpeg_encoder_shares_decoder_handle();

}  // namespace cudaconv
