#include "kernels/codecs/jpeg_batch.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "kernels/codecs/jpeg_decoder.hpp"
#include "kernels/runtime/cuda_backend.hpp"
#include "kernels/runtime/cuda_check.hpp"
#include "kernels/runtime/cuda_resources.hpp"

namespace cudaconv {
namespace {

// Rows of the decoded images start 256 bytes apart at least, as cudaMallocPitch's do.
constexpr std::size_t kPitchAlignment = 256;

std::size_t decoded_pitch(const JpegInspection& inspection) {
    const auto row =
        static_cast<std::size_t>(inspection.width) * static_cast<std::size_t>(inspection.channels);
    return (row + kPitchAlignment - 1) / kPitchAlignment * kPitchAlignment;
}

// A device buffer kept between batches: the i-th image of a batch decodes
// into the i-th buffer, replaced only when too small.
struct KeptBuffer {
    DeviceArray<std::byte> memory{nullptr};
    std::size_t bytes = 0;
};

std::unique_ptr<GpuJpegDecoder> open_decoder() {
    try {
        return std::make_unique<GpuJpegDecoder>(JpegBackend::hardware);
    } catch (const CudaError& hardware) {
        spdlog::debug("{}; decoding JPEG on the GPU's cores instead", hardware.what());
    }
    return std::make_unique<GpuJpegDecoder>(JpegBackend::gpu_hybrid);
}

}  // namespace

struct GpuJpegBatch::State {
    std::unique_ptr<GpuJpegDecoder> decoder;
    std::unique_ptr<Stream> stream;
    std::vector<KeptBuffer> buffers;
};

GpuJpegBatch::GpuJpegBatch() : state_(std::make_unique<State>()) {
    CUDA_CHECK(cudaSetDevice(current_device().index));
    state_->decoder = open_decoder();
    state_->stream = std::make_unique<Stream>();
}

GpuJpegBatch::~GpuJpegBatch() {
    if (state_ && state_->stream) cudaStreamSynchronize(state_->stream->get());
}

std::string_view GpuJpegBatch::name() const {
    return state_->decoder->backend() == JpegBackend::hardware ? "nvjpeg-hardware"
                                                               : "nvjpeg-hybrid";
}

JpegInspection GpuJpegBatch::inspect(const unsigned char* data, std::size_t size) const {
    return state_->decoder->inspect(data, size);
}

void GpuJpegBatch::decode(const std::vector<GpuJpegImage*>& images) {
    CUDA_CHECK(cudaSetDevice(current_device().index));
    if (state_->buffers.size() < images.size()) state_->buffers.resize(images.size());
    std::vector<JpegDecodeTarget> targets;
    std::vector<GpuJpegImage*> decoding;
    for (std::size_t i = 0; i < images.size(); ++i) {
        GpuJpegImage& image = *images[i];
        image.device_pixels = nullptr;
        image.error.clear();
        const std::size_t pitch = decoded_pitch(image.inspection);
        const std::size_t bytes = pitch * static_cast<std::size_t>(image.inspection.height);
        KeptBuffer& buffer = state_->buffers[i];
        if (buffer.bytes < bytes) {
            buffer = KeptBuffer{};  // the old one first: the device may be nearly full
            void* memory = nullptr;
            const cudaError_t status = cudaMalloc(&memory, bytes);
            if (status != cudaSuccess) {
                cudaGetLastError();  // cleared: the next call should not see it
                image.error = std::string("no room on the device to decode it (") +
                              cudaGetErrorString(status) + ")";
                continue;
            }
            buffer.memory.reset(static_cast<std::byte*>(memory));
            buffer.bytes = bytes;
        }
        image.pitch = pitch;
        JpegDecodeTarget target;
        target.data = image.data;
        target.size = image.size;
        target.dst = reinterpret_cast<unsigned char*>(buffer.memory.get());
        target.pitch = pitch;
        target.channels = image.inspection.channels;
        targets.push_back(target);
        decoding.push_back(&image);
    }
    if (targets.empty()) return;
    const std::vector<std::string> messages =
        state_->decoder->decode(targets, state_->stream->get());
    for (std::size_t i = 0; i < decoding.size(); ++i) {
        if (messages[i].empty()) {
            decoding[i]->device_pixels = reinterpret_cast<const std::byte*>(targets[i].dst);
        } else {
            decoding[i]->error = messages[i];
        }
    }
}

}  // namespace cudaconv
