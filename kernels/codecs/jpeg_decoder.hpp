#pragma once
// JPEG decoded on the GPU by nvJPEG (opened at run time, nvjpeg_loader.hpp):
// on the hardware decoding engine where the GPU has one (A100, H100 and
// later), otherwise on the GPU's cores (nvJPEG's GPU-hybrid backend, whose
// Huffman decoding runs on the CPU for small batches). Images come out as
// the CPU decoder's would with IMREAD_UNCHANGED, interleaved, in device
// memory: BGR for a colour JPEG, one channel for a gray one. Their samples
// may differ from libjpeg-turbo's by the rounding of the IDCT and of chroma
// upsampling: on an H100, for the 4:2:0 JPEGs of the sample images, by up
// to 16 levels and 0.5 on average (tests/unit/test_jpeg_decoder.cpp holds
// both backends within 20 and 1.0).
#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/codecs/jpeg_batch.hpp"

namespace cudaconv {

// One image of a batch: the file's bytes, and where its pixels go (device
// memory, rows of width * channels bytes, `pitch` bytes apart).
struct JpegDecodeTarget {
    const unsigned char* data = nullptr;
    std::size_t size = 0;
    unsigned char* dst = nullptr;
    std::size_t pitch = 0;
    int channels = 3;           // JpegInspection::channels
    int width = 0, height = 0;  // JpegInspection's
};

class GpuJpegDecoder {
public:
    // Throws CudaError, saying why, where nvJPEG is missing or `backend`
    // cannot start (the hardware backend on a GPU without the engine).
    explicit GpuJpegDecoder(JpegBackend backend);
    ~GpuJpegDecoder();
    GpuJpegDecoder(const GpuJpegDecoder&) = delete;
    GpuJpegDecoder& operator=(const GpuJpegDecoder&) = delete;

    JpegBackend backend() const;

    // Whether this decoder takes the JPEG in `data` (8-bit baseline or
    // extended Huffman coding, gray or YCbCr in a subsampling it knows),
    // and the image's size. Any thread, at once with others and with
    // decode(). Never throws for the file's content.
    JpegInspection inspect(const unsigned char* data, std::size_t size) const;

    // Decodes every target (each inspected without refusal) on `stream`, as
    // one batch a channel count, and waits for them. Returns one message an
    // image: empty where it was decoded, else why not (a corrupt file), so
    // that one bad image fails alone. `images_per_call`: the most images
    // the caller's calls of images this large hold (0: this call's count).
    // The hardware backend makes its buffers for that many at the first
    // call, rather than again as calls grow (each time through cudaFree and
    // cudaMalloc, which wait for the whole device), and again only for a
    // call that needs more.
    std::vector<std::string> decode(const std::vector<JpegDecodeTarget>& targets,
                                    cudaStream_t stream, int images_per_call = 0);

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace cudaconv
