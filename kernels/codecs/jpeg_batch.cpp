#include "kernels/codecs/jpeg_batch.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "kernels/codecs/jpeg_decoder.hpp"
#include "kernels/runtime/cuda_backend.hpp"
#include "kernels/runtime/cuda_check.hpp"
#include "kernels/runtime/cuda_resources.hpp"
#include "kernels/runtime/device_scope.hpp"

namespace cudaconv {
namespace {

// Rows of the decoded images start 256 bytes apart at least, as cudaMallocPitch's do.
constexpr std::size_t kPitchAlignment = 256;

std::size_t decoded_pitch(const JpegInspection& inspection) {
    const auto row =
        static_cast<std::size_t>(inspection.width) * static_cast<std::size_t>(inspection.channels);
    return (row + kPitchAlignment - 1) / kPitchAlignment * kPitchAlignment;
}

// The device buffers images hold their pixels in: taken by decode(), given
// back when an image lets its pixels go, and kept for the next images, of
// the same size in a batch of photos. A buffer given back is freed only
// where the buffers together pass both the most the images have held at
// once and kKeptBytes: so a batch of photos makes as many buffers as it
// holds images at its busiest, then neither allocates nor frees again
// (both take driver locks, and cudaFree waits for the whole device). Shared
// with the images' pointers, so that one outliving the decoder still frees
// its own.
class BufferPool : public std::enable_shared_from_this<BufferPool> {
public:
    explicit BufferPool(std::size_t kept_bytes) : kept_bytes_(kept_bytes) {}
    ~BufferPool() {
        for (const auto& [bytes, memory] : idle_) cudaFree(memory);
    }

    // For -v and tests: how many buffers were made and freed, and the most held at once.
    std::string summary() {
        const std::lock_guard<std::mutex> lock(mutex_);
        return fmt::format("{} buffers made, {} freed; at most {} MiB held by images at once",
                           made_, freed_, peak_held_bytes_ >> 20);
    }

    // A buffer of at least `bytes`, or null with `error` saying why.
    std::shared_ptr<const std::byte> take(std::size_t bytes, std::string& error) {
        std::byte* memory = nullptr;
        std::size_t size = bytes;
        {
            const std::lock_guard<std::mutex> lock(mutex_);
            // One a little larger will do; one far larger is kept for an image it fits.
            const auto fit = idle_.lower_bound(bytes);
            if (fit != idle_.end() && fit->first <= bytes + bytes / 4) {
                size = fit->first;
                memory = fit->second;
                idle_bytes_ -= size;
                idle_.erase(fit);
                lend(size);
            }
        }
        if (!memory) memory = allocate(bytes, error);
        if (!memory) return nullptr;
        std::weak_ptr<BufferPool> pool = weak_from_this();
        return std::shared_ptr<const std::byte>(memory, [pool, size](const std::byte* p) {
            auto* held = const_cast<std::byte*>(p);
            if (const auto alive = pool.lock()) {
                alive->give_back(held, size);
            } else {
                cudaFree(held);
            }
        });
    }

private:
    // cudaMalloc, after freeing what is kept where the device is full.
    std::byte* allocate(std::size_t bytes, std::string& error) {
        void* memory = nullptr;
        cudaError_t status = cudaMalloc(&memory, bytes);
        if (status == cudaErrorMemoryAllocation) {
            cudaGetLastError();
            free_idle();
            status = cudaMalloc(&memory, bytes);
        }
        if (status != cudaSuccess) {
            cudaGetLastError();  // cleared: the next call should not see it
            error = std::string("no room on the device to decode it (") +
                    cudaGetErrorString(status) + ")";
            return nullptr;
        }
        const std::lock_guard<std::mutex> lock(mutex_);
        ++made_;
        lend(bytes);
        return static_cast<std::byte*>(memory);
    }

    // Under mutex_: `bytes` more held by images.
    void lend(std::size_t bytes) {
        held_bytes_ += bytes;
        peak_held_bytes_ = std::max(peak_held_bytes_, held_bytes_);
    }

    void give_back(std::byte* memory, std::size_t bytes) {
        {
            const std::lock_guard<std::mutex> lock(mutex_);
            held_bytes_ -= bytes;
            const std::size_t all = held_bytes_ + idle_bytes_ + bytes;
            if (all <= std::max(peak_held_bytes_, kept_bytes_)) {
                idle_.emplace(bytes, memory);
                idle_bytes_ += bytes;
                return;
            }
            ++freed_;
        }
        cudaFree(memory);
    }

    void free_idle() {
        const std::lock_guard<std::mutex> lock(mutex_);
        for (const auto& [bytes, memory] : idle_) cudaFree(memory);
        idle_.clear();
        idle_bytes_ = 0;
    }

    const std::size_t kept_bytes_;
    std::mutex mutex_;
    std::multimap<std::size_t, std::byte*> idle_;  // by size
    std::size_t idle_bytes_ = 0;
    std::size_t held_bytes_ = 0;       // lent to images now
    std::size_t peak_held_bytes_ = 0;  // the most lent at once
    std::uint64_t made_ = 0;
    std::uint64_t freed_ = 0;
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
    std::shared_ptr<BufferPool> buffers;
    std::mutex decoding;  // decode()'s: nvJPEG's decode state is for one call at a time
    int device = 0;       // the device it was made on, whose memory and handles it holds
};

GpuJpegBatch::GpuJpegBatch(std::size_t kept_bytes) : state_(std::make_unique<State>()) {
    state_->buffers = std::make_shared<BufferPool>(kept_bytes);
    state_->device = current_device().index;
    CUDA_CHECK(cudaSetDevice(state_->device));
    state_->decoder = open_decoder();
    state_->stream = std::make_unique<Stream>();
}

GpuJpegBatch::~GpuJpegBatch() {
    if (!state_) return;
    // Destroyed on whichever thread owns it last (a batch on several devices
    // ends on the main thread): its handles and memory are freed on its own
    // device, and the thread's device is put back after where it has one
    // (device_scope.hpp). cudaGetDevice would say 0 on a thread that never
    // chose, and setting that would make device 0's context for nothing.
    const int previous = thread_device();
    if (cudaSetDevice(state_->device) != cudaSuccess) cudaGetLastError();
    if (state_->stream) cudaStreamSynchronize(state_->stream->get());
    const int own = state_->device;
    state_.reset();
    if (previous >= 0 && previous != own && cudaSetDevice(previous) != cudaSuccess) {
        cudaGetLastError();
    }
}

std::string GpuJpegBatch::buffers_summary() const { return state_->buffers->summary(); }

std::string_view GpuJpegBatch::name() const {
    return state_->decoder->backend() == JpegBackend::hardware ? "nvjpeg-hardware"
                                                               : "nvjpeg-hybrid";
}

JpegInspection GpuJpegBatch::inspect(const unsigned char* data, std::size_t size) const {
    return state_->decoder->inspect(data, size);
}

void GpuJpegBatch::decode(const std::vector<GpuJpegImage*>& images, std::size_t images_per_call) {
    const std::lock_guard<std::mutex> lock(state_->decoding);
    // Its handles, stream and buffers are its own device's, whichever
    // device the calling thread is bound to.
    CUDA_CHECK(cudaSetDevice(state_->device));
    std::vector<JpegDecodeTarget> targets;
    std::vector<GpuJpegImage*> decoding;
    for (GpuJpegImage* image : images) {
        image->device_pixels.reset();
        image->error.clear();
        const std::size_t pitch = decoded_pitch(image->inspection);
        std::shared_ptr<const std::byte> pixels = state_->buffers->take(
            pitch * static_cast<std::size_t>(image->inspection.height), image->error);
        if (!pixels) continue;
        image->pitch = pitch;
        JpegDecodeTarget target;
        target.data = image->data;
        target.size = image->size;
        // nvJPEG writes where the image will read.
        target.dst = reinterpret_cast<unsigned char*>(const_cast<std::byte*>(pixels.get()));
        target.pitch = pitch;
        target.channels = image->inspection.channels;
        target.width = image->inspection.width;
        target.height = image->inspection.height;
        targets.push_back(target);
        image->device_pixels = std::move(pixels);
        decoding.push_back(image);
    }
    if (targets.empty()) return;
    const std::vector<std::string> messages =
        state_->decoder->decode(targets, state_->stream->get(), static_cast<int>(images_per_call));
    for (std::size_t i = 0; i < decoding.size(); ++i) {
        if (messages[i].empty()) continue;
        decoding[i]->device_pixels.reset();
        decoding[i]->error = messages[i];
    }
}

}  // namespace cudaconv
