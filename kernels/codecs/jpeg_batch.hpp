#pragma once
// The GPU's JPEG decoder as a batch uses it, with no CUDA type in sight so
// that src/ includes it in every build: a worker asks whether the GPU takes
// a file (inspect), and the thread before the GPU thread decodes the files
// taken, several at once, into device memory that the CUDA variants read
// in place of an upload (RunOptions::device_src). kernels/codecs/jpeg_decoder.hpp is the
// decoder underneath; without the CUDA toolkit the constructor says that
// this build has none.
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace cudaconv {

enum class JpegBackend { hardware, gpu_hybrid };
std::string_view jpeg_backend_name(JpegBackend backend);

// What the decoder makes of one JPEG before decoding it.
struct JpegInspection {
    int width = 0, height = 0;
    int channels = 0;     // of the decoded image: 3 (BGR) or 1
    std::string refusal;  // why this decoder does not take it; empty when it does
};

// One image of a batch: the file's bytes and what inspect() said of them;
// decode() sets the rest.
struct GpuJpegImage {
    const unsigned char* data = nullptr;
    std::size_t size = 0;
    JpegInspection inspection;
    // Rows of width * channels bytes, `pitch` apart, on the device; null
    // where it failed. The memory is the image's until this pointer goes,
    // then the decoder's again, for another image.
    std::shared_ptr<const std::byte> device_pixels;
    std::size_t pitch = 0;
    std::string error;  // why it failed (nvJPEG's words): the caller retries on the CPU
};

class GpuJpegBatch {
public:
    // Opens nvJPEG on the calling thread's device (kernels/runtime/
    // device_scope.hpp), which it keeps: the hardware backend where the GPU
    // has a JPEG engine, else the GPU-hybrid one. Throws CudaError, saying
    // why, where neither can start (no library, no device, no CUDA build).
    // `kept_bytes`: see kKeptBytes.
    explicit GpuJpegBatch(std::size_t kept_bytes = kKeptBytes);
    ~GpuJpegBatch();
    GpuJpegBatch(const GpuJpegBatch&) = delete;
    GpuJpegBatch& operator=(const GpuJpegBatch&) = delete;

    // "nvjpeg-hardware" or "nvjpeg-hybrid": what --json calls the decoder.
    std::string_view name() const;

    // Whether the GPU takes this JPEG, and its size; any thread, at once
    // with others and with decode(). Never throws for the file's content.
    JpegInspection inspect(const unsigned char* data, std::size_t size) const;

    // Decodes every image (inspected without refusal) on the decoder's own
    // device and stream, from any thread, one call at a time, and waits for
    // them: once it returns, any stream may read the pixels. An image that
    // fails has `error` set and no pixels, and the others decode all the
    // same. Device memory stays bounded by the images whose pixels are
    // held: what they give back is kept for the next ones while the
    // decoder's buffers together hold no more than its images have held at
    // once, or kKeptBytes; and by nvJPEG's own buffers, made for one call of
    // `images_per_call` images as large as these (GpuJpegDecoder::decode).
    void decode(const std::vector<GpuJpegImage*>& images, std::size_t images_per_call = 0);

    // Device memory the decoder keeps for the next images, rather than free
    // (cudaFree waits for the whole device), even past the most its images
    // have held at once.
    static constexpr std::size_t kKeptBytes = std::size_t{1} << 30;

    // For -v (GpuDecoding::log_buffers) and tests: "40 buffers made, 0
    // freed; at most 1440 MiB held by images at once".
    std::string buffers_summary() const;

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace cudaconv
