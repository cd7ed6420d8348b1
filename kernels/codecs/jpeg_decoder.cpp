#include "kernels/codecs/jpeg_decoder.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "kernels/codecs/nvjpeg_handle.hpp"
#include "kernels/codecs/nvjpeg_loader.hpp"
#include "kernels/runtime/cuda_check.hpp"
#include "kernels/runtime/pinned_staging.hpp"

namespace cudaconv {
namespace {

using namespace nvj;

nvjpegBackend_t library_backend(JpegBackend backend) {
    return backend == JpegBackend::hardware ? NVJPEG_BACKEND_HARDWARE : NVJPEG_BACKEND_GPU_HYBRID;
}

nvjpegOutputFormat_t output_format(int channels) {
    return channels == 1 ? NVJPEG_OUTPUT_Y : NVJPEG_OUTPUT_BGRI;
}

// The hardware backend without its pipelining, which only pays where a
// call is not waited for: decode() waits for every call
// (docs/PERFORMANCE.md has the measured difference).
unsigned int create_flags(JpegBackend backend) {
    return backend == JpegBackend::hardware ? kFlagsHwDecodeNoPipeline : kFlagsDefault;
}

// A call's bitstreams, where `stage`, copied into this thread's
// page-locked buffer (pinned_staging.hpp), from which the hardware
// backend's copies to the device go straight rather than through the
// driver's staging buffers, where they would queue with the GPU thread's
// copies; else, or where no page-locked memory is left, the files' own
// bytes.
std::vector<const unsigned char*> bitstreams(const std::vector<const JpegDecodeTarget*>& targets,
                                             bool stage) {
    std::vector<const unsigned char*> data(targets.size());
    std::size_t bytes = 0;
    for (const JpegDecodeTarget* target : targets) bytes += target->size;
    std::byte* staging = nullptr;
    if (stage) {
        try {
            staging = pinned_staging(bytes);
        } catch (const CudaError&) {
            cudaGetLastError();  // cleared: the next call should not see it
        }
    }
    for (std::size_t i = 0; i < targets.size(); ++i) {
        data[i] = targets[i]->data;
        if (!staging) continue;
        std::memcpy(staging, targets[i]->data, targets[i]->size);
        data[i] = reinterpret_cast<const unsigned char*>(staging);
        staging += targets[i]->size;
    }
    return data;
}

}  // namespace

std::string_view jpeg_backend_name(JpegBackend backend) {
    return backend == JpegBackend::hardware ? "hardware" : "gpu-hybrid";
}

struct GpuJpegDecoder::State {
    std::shared_ptr<const Api> api;
    JpegBackend backend = JpegBackend::gpu_hybrid;
    // Offered to the device's JPEG encoders (nvjpeg_handle.hpp), which may
    // outlive this decoder.
    std::shared_ptr<NvjpegHandle> shared_handle;
    nvjpegJpegState_t decode_state = nullptr;
    // nvjpegDecodeBatchedInitialize's last arguments: it is called again
    // only when a batch differs.
    int batch_size = 0;
    int batch_channels = 0;
    // What nvjpegDecodeBatchedPreAllocate last made the hardware backend's
    // buffers for: calls of up to that many images, of up to that many
    // pixels each (the largest's width and height).
    int prepared_images = 0, prepared_width = 0, prepared_height = 0;
    // inspect()'s parsers, one a call at a time (nvJPEG's parsed streams
    // are not for two threads at once): made as calls need them, kept.
    std::vector<nvjpegJpegStream_t> idle_parsers;
    std::mutex parsers_mutex;

    ~State() {
        for (nvjpegJpegStream_t parser : idle_parsers) api->nvjpegJpegStreamDestroy(parser);
        if (decode_state) api->nvjpegJpegStateDestroy(decode_state);
    }

    nvjpegHandle_t handle() const { return shared_handle->get(); }

    void check(nvjpegStatus_t status, const char* call) const {
        if (status != NVJPEG_STATUS_SUCCESS) {
            throw CudaError(fmt::format("nvJPEG ({} backend): {} failed: {}",
                                        jpeg_backend_name(backend), call,
                                        nvjpeg_status_name(status)));
        }
    }

    // An idle parser, or a new one; null where none can be made.
    nvjpegJpegStream_t take_parser() {
        {
            const std::lock_guard<std::mutex> lock(parsers_mutex);
            if (!idle_parsers.empty()) {
                nvjpegJpegStream_t parser = idle_parsers.back();
                idle_parsers.pop_back();
                return parser;
            }
        }
        nvjpegJpegStream_t parser = nullptr;
        if (api->nvjpegJpegStreamCreate(handle(), &parser) != NVJPEG_STATUS_SUCCESS) return nullptr;
        return parser;
    }

    // A parser taken, given back on the way out.
    struct ParserLease {
        State& state;
        nvjpegJpegStream_t parser;
        ~ParserLease() {
            const std::lock_guard<std::mutex> lock(state.parsers_mutex);
            state.idle_parsers.push_back(parser);
        }
    };

    // The hardware backend's buffers made for calls of `images` images as
    // large as the largest of these targets, where the last ones made are
    // for fewer images or smaller ones. Made for this need alone, not the
    // largest of each seen (a group of small images then one huge one would
    // otherwise ask for room for a group of huge ones).
    void prepare(const std::vector<const JpegDecodeTarget*>& targets, int images) {
        if (backend != JpegBackend::hardware) return;
        const JpegDecodeTarget* largest = targets.front();
        for (const JpegDecodeTarget* target : targets) {
            if (pixels(*target) > pixels(*largest)) largest = target;
        }
        const std::int64_t prepared_pixels =
            std::int64_t{prepared_width} * std::int64_t{prepared_height};
        if (images <= prepared_images && pixels(*largest) <= prepared_pixels) return;
        prepared_images = images;
        prepared_width = largest->width;
        prepared_height = largest->height;
        // 4:4:4 and interleaved BGR, the largest planes nvJPEG's buffers may
        // hold (a gray group decoded first must not leave them too small for
        // colour); a failure only leaves nvJPEG to make them as it goes.
        const nvjpegStatus_t status = api->nvjpegDecodeBatchedPreAllocate(
            handle(), decode_state, prepared_images, prepared_width, prepared_height,
            NVJPEG_CSS_444, NVJPEG_OUTPUT_BGRI);
        spdlog::debug("nvjpeg: buffers made for {} images of {}x{}: {}", prepared_images,
                      prepared_width, prepared_height, nvjpeg_status_name(status));
        batch_size = 0;  // the next batch is initialized on the buffers just made
    }

    static std::int64_t pixels(const JpegDecodeTarget& target) {
        return std::int64_t{target.width} * std::int64_t{target.height};
    }

    // One batched decode of images of one channel count; the status of the
    // whole batch. `stage`: its bitstreams go through page-locked memory.
    nvjpegStatus_t decode_batch(const std::vector<const JpegDecodeTarget*>& targets,
                                cudaStream_t stream, int images_per_call, bool stage) {
        const int count = static_cast<int>(targets.size());
        const int channels = targets.front()->channels;
        prepare(targets, std::max(count, images_per_call));
        if (count != batch_size || channels != batch_channels) {
            // One CPU thread: this one.
            const nvjpegStatus_t status = api->nvjpegDecodeBatchedInitialize(
                handle(), decode_state, count, 1, output_format(channels));
            if (status != NVJPEG_STATUS_SUCCESS) return status;
            batch_size = count;
            batch_channels = channels;
        }
        const std::vector<const unsigned char*> data = bitstreams(targets, stage);
        std::vector<std::size_t> sizes(targets.size());
        std::vector<nvjpegImage_t> images(targets.size());
        for (std::size_t i = 0; i < targets.size(); ++i) {
            sizes[i] = targets[i]->size;
            images[i] = nvjpegImage_t{};
            images[i].channel[0] = targets[i]->dst;
            images[i].pitch[0] = targets[i]->pitch;
        }
        const nvjpegStatus_t status = api->nvjpegDecodeBatched(handle(), decode_state, data.data(),
                                                               sizes.data(), images.data(), stream);
        CUDA_CHECK(cudaStreamSynchronize(stream));
        if (status != NVJPEG_STATUS_SUCCESS) batch_size = 0;  // initialize again after a failure
        return status;
    }
};

GpuJpegDecoder::GpuJpegDecoder(JpegBackend backend) : state_(std::make_unique<State>()) {
    const NvjpegLibrary& library = load_nvjpeg();
    if (!library.api) throw CudaError(library.problem);
    state_->api = library.api;
    state_->backend = backend;
    const Api& api = *state_->api;
    nvjpegHandle_t handle = nullptr;
    const nvjpegStatus_t created = api.nvjpegCreateEx(library_backend(backend), nullptr, nullptr,
                                                      create_flags(backend), &handle);
    if (created != NVJPEG_STATUS_SUCCESS) {
        if (backend == JpegBackend::hardware) {
            throw CudaError(fmt::format(
                "nvJPEG's hardware backend cannot start ({}): this GPU has no JPEG decoding engine",
                nvjpeg_status_name(created)));
        }
        state_->check(created, "nvjpegCreateEx");
    }
    state_->shared_handle = std::make_shared<NvjpegHandle>(state_->api, handle);
    state_->check(api.nvjpegJpegStateCreate(handle, &state_->decode_state),
                  "nvjpegJpegStateCreate");
    offer_device_handle(state_->shared_handle);
}

GpuJpegDecoder::~GpuJpegDecoder() = default;

JpegBackend GpuJpegDecoder::backend() const { return state_->backend; }

JpegInspection GpuJpegDecoder::inspect(const unsigned char* data, std::size_t size) const {
    const Api& api = *state_->api;
    JpegInspection out;
    nvjpegJpegStream_t parser = state_->take_parser();
    if (!parser) {
        out.refusal = "nvJPEG has no memory left to parse it";
        return out;
    }
    const State::ParserLease lease{*state_, parser};
    const nvjpegStatus_t parsed =
        api.nvjpegJpegStreamParse(state_->handle(), data, size, 0, 0, parser);
    if (parsed != NVJPEG_STATUS_SUCCESS) {
        out.refusal = fmt::format("nvJPEG cannot parse it ({})", nvjpeg_status_name(parsed));
        return out;
    }
    nvjpegJpegEncoding_t encoding = NVJPEG_ENCODING_UNKNOWN;
    unsigned int precision = 0, components = 0, width = 0, height = 0;
    nvjpegChromaSubsampling_t subsampling = NVJPEG_CSS_UNKNOWN;
    if (api.nvjpegJpegStreamGetJpegEncoding(parser, &encoding) != NVJPEG_STATUS_SUCCESS ||
        api.nvjpegJpegStreamGetSamplePrecision(parser, &precision) != NVJPEG_STATUS_SUCCESS ||
        api.nvjpegJpegStreamGetComponentsNum(parser, &components) != NVJPEG_STATUS_SUCCESS ||
        api.nvjpegJpegStreamGetChromaSubsampling(parser, &subsampling) != NVJPEG_STATUS_SUCCESS ||
        api.nvjpegJpegStreamGetFrameDimensions(parser, &width, &height) != NVJPEG_STATUS_SUCCESS) {
        out.refusal = "nvJPEG cannot read its header";
        return out;
    }
    if (encoding != NVJPEG_ENCODING_BASELINE_DCT &&
        encoding != NVJPEG_ENCODING_EXTENDED_SEQUENTIAL_DCT_HUFFMAN) {
        out.refusal = encoding == NVJPEG_ENCODING_PROGRESSIVE_DCT_HUFFMAN
                          ? "a progressive JPEG"
                          : fmt::format("JPEG coding 0x{:x} (lossless or arithmetic)",
                                        static_cast<int>(encoding));
        return out;
    }
    if (precision != 8) {
        out.refusal = fmt::format("{}-bit samples", precision);
        return out;
    }
    if (components != 1 && components != 3) {
        out.refusal = fmt::format("{} colour components (CMYK or YCCK)", components);
        return out;
    }
    if (components == 3 && (subsampling == NVJPEG_CSS_UNKNOWN || subsampling == NVJPEG_CSS_GRAY)) {
        out.refusal = "an unusual chroma subsampling";
        return out;
    }
    if (state_->backend == JpegBackend::hardware) {
        int unsupported = 1;
        const nvjpegStatus_t asked =
            api.nvjpegDecodeBatchedSupported(state_->handle(), parser, &unsupported);
        if (asked != NVJPEG_STATUS_SUCCESS || unsupported != 0) {
            out.refusal = "the hardware decoder does not take it";
            return out;
        }
    }
    out.width = static_cast<int>(width);
    out.height = static_cast<int>(height);
    out.channels = components == 1 ? 1 : 3;
    return out;
}

std::vector<std::string> GpuJpegDecoder::decode(const std::vector<JpegDecodeTarget>& targets,
                                                cudaStream_t stream, int images_per_call) {
    std::vector<std::string> messages(targets.size());
    std::map<int, std::vector<std::size_t>> by_channels;
    for (std::size_t i = 0; i < targets.size(); ++i) by_channels[targets[i].channels].push_back(i);
    for (const auto& [channels, indices] : by_channels) {
        std::vector<const JpegDecodeTarget*> batch;
        for (std::size_t i : indices) batch.push_back(&targets[i]);
        // Only the hardware backend copies the bitstreams to the device
        // (the GPU-hybrid one decodes Huffman codes on the CPU).
        const bool stage = state_->backend == JpegBackend::hardware;
        if (state_->decode_batch(batch, stream, images_per_call, stage) == NVJPEG_STATUS_SUCCESS) {
            continue;
        }
        // One image spoilt the batch: decode each alone, to fail it alone,
        // from the files' own bytes (whatever of the failed call may still
        // read the page-locked copies).
        for (std::size_t i : indices) {
            const nvjpegStatus_t status =
                state_->decode_batch({&targets[i]}, stream, images_per_call, false);
            if (status != NVJPEG_STATUS_SUCCESS) {
                messages[i] = fmt::format("nvJPEG ({}) cannot decode it: {}",
                                          jpeg_backend_name(state_->backend),
                                          nvjpeg_status_name(status));
            }
        }
    }
    return messages;
}

}  // namespace cudaconv
