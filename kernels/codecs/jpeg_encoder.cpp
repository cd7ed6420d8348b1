#include "kernels/codecs/jpeg_encoder.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "kernels/codecs/gpu_jpeg_encoder.hpp"
#include "kernels/codecs/nvjpeg_handle.hpp"
#include "kernels/codecs/nvjpeg_loader.hpp"
#include "kernels/runtime/cuda_check.hpp"
#include "kernels/runtime/pinned_staging.hpp"

namespace cudaconv {
namespace {

using namespace nvj;

// libjpeg's JPEG_MAX_DIMENSION, so both encoders take the same sides.
constexpr std::int64_t kMaxJpegSide = 65500;

// One thread's encoder: the handle of its device's decoder where one lives
// (nvjpeg_handle.hpp), else one of nvJPEG's default backend (encoding runs
// on the GPU's cores whichever the backend: the hardware engine decodes
// only, and the files come out the same); and a state whose device buffers
// grow to the largest image encoded.
class Encoder {
public:
    explicit Encoder(std::shared_ptr<const Api> api, cudaStream_t stream)
        : api_(std::move(api)), handle_(offered_device_handle()), shares_(handle_ != nullptr) {
        if (!handle_) {
            nvjpegHandle_t made = nullptr;
            check(api_->nvjpegCreateEx(NVJPEG_BACKEND_DEFAULT, nullptr, nullptr, kFlagsDefault,
                                       &made),
                  "nvjpegCreateEx");
            handle_ = std::make_shared<NvjpegHandle>(api_, made);
        }
        check(api_->nvjpegEncoderStateCreate(handle_->get(), &state_, stream),
              "nvjpegEncoderStateCreate");
        check(api_->nvjpegEncoderParamsCreate(handle_->get(), &params_, stream),
              "nvjpegEncoderParamsCreate");
    }
    ~Encoder() {
        // Statuses ignored: nothing can be done about them on the way out.
        if (params_) api_->nvjpegEncoderParamsDestroy(params_);
        if (state_) api_->nvjpegEncoderStateDestroy(state_);
    }
    Encoder(const Encoder&) = delete;
    Encoder& operator=(const Encoder&) = delete;

    // Whether the handle is the device's decoder's.
    bool shares_handle() const { return shares_; }

    std::vector<std::uint8_t> encode(const DeviceImageRows& image, const JpegSettings& settings,
                                     cudaStream_t stream) {
        const nvjpegHandle_t handle = handle_->get();
        const bool gray = image.channels == 1;
        check(api_->nvjpegEncoderParamsSetQuality(params_, std::clamp(settings.quality, 1, 100),
                                                  stream),
              "nvjpegEncoderParamsSetQuality");
        check(api_->nvjpegEncoderParamsSetSamplingFactors(
                  params_, gray ? NVJPEG_CSS_GRAY : subsampling(settings.sampling), stream),
              "nvjpegEncoderParamsSetSamplingFactors");
        nvjpegImage_t source{};
        source.channel[0] =
            const_cast<unsigned char*>(reinterpret_cast<const unsigned char*>(image.data));
        source.pitch[0] = static_cast<size_t>(image.pitch);
        const int width = static_cast<int>(image.width);
        const int height = static_cast<int>(image.height);
        if (gray) {
            // A gray JPEG is its luma plane alone: the samples as they are.
            check(api_->nvjpegEncodeYUV(handle, state_, params_, &source, NVJPEG_CSS_GRAY, width,
                                        height, stream),
                  "nvjpegEncodeYUV");
        } else {
            check(api_->nvjpegEncodeImage(handle, state_, params_, &source, NVJPEG_INPUT_BGRI,
                                          width, height, stream),
                  "nvjpegEncodeImage");
        }
        size_t length = 0;
        check(api_->nvjpegEncodeRetrieveBitstream(handle, state_, nullptr, &length, stream),
              "nvjpegEncodeRetrieveBitstream");
        // Through page-locked memory (pinned_staging.hpp says why).
        auto* staging = reinterpret_cast<unsigned char*>(pinned_staging(length));
        check(api_->nvjpegEncodeRetrieveBitstream(handle, state_, staging, &length, stream),
              "nvjpegEncodeRetrieveBitstream");
        CUDA_CHECK(cudaStreamSynchronize(stream));
        return std::vector<std::uint8_t>(staging, staging + length);
    }

private:
    static nvjpegChromaSubsampling_t subsampling(ChromaSampling sampling) {
        switch (sampling) {
            case ChromaSampling::s420: return NVJPEG_CSS_420;
            case ChromaSampling::s422: return NVJPEG_CSS_422;
            case ChromaSampling::s444: return NVJPEG_CSS_444;
        }
        return NVJPEG_CSS_420;
    }

    static void check(nvjpegStatus_t status, const char* call) {
        if (status == NVJPEG_STATUS_SUCCESS) return;
        // nvJPEG's allocation failures, as the runtime's, so that callers
        // that recover from out of memory recover from this one too.
        throw CudaError(
            fmt::format("nvJPEG encoder: {} failed: {}", call, nvjpeg_status_name(status)),
            status == NVJPEG_STATUS_ALLOCATOR_FAILURE ? cudaErrorMemoryAllocation
                                                      : cudaErrorUnknown);
    }

    std::shared_ptr<const Api> api_;
    std::shared_ptr<NvjpegHandle> handle_;
    bool shares_ = false;
    nvjpegEncoderState_t state_ = nullptr;
    nvjpegEncoderParams_t params_ = nullptr;
};

thread_local std::unique_ptr<Encoder> t_encoder;

}  // namespace

std::string jpeg_on_device_problem(std::int64_t width, std::int64_t height, int channels,
                                   Depth depth) {
    if (depth != Depth::u8) return "JPEG holds 8-bit samples";
    if (channels != 1 && channels != 3) return "JPEG holds 1 or 3 channels";
    if (width < 1 || height < 1 || width > kMaxJpegSide || height > kMaxJpegSide) {
        return fmt::format("JPEG holds sides of 1 to {} pixels", kMaxJpegSide);
    }
    const NvjpegLibrary& library = load_nvjpeg();
    return library.api ? std::string() : library.problem;
}

std::vector<std::uint8_t> encode_jpeg_on_device(const DeviceImageRows& image,
                                                const JpegSettings& settings, cudaStream_t stream) {
    const std::string problem =
        jpeg_on_device_problem(image.width, image.height, image.channels, image.depth);
    if (!problem.empty()) throw CudaError("nvJPEG encoder: " + problem);
    try {
        if (!t_encoder) t_encoder = std::make_unique<Encoder>(load_nvjpeg().api, stream);
        return t_encoder->encode(image, settings, stream);
    } catch (const CudaError& e) {
        if (e.status() == cudaErrorMemoryAllocation) release_jpeg_encoder();
        throw;
    }
}

void release_jpeg_encoder() { t_encoder.reset(); }

bool jpeg_encoder_shares_decoder_handle() { return t_encoder && t_encoder->shares_handle(); }

std::string gpu_jpeg_encoder_problem() { return load_nvjpeg().problem; }

}  // namespace cudaconv
