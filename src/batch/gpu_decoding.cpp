#include "batch/gpu_decoding.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "base/errors.hpp"
#include "batch/devices.hpp"
#include "io/exif_orientation.hpp"
#include "kernels/runtime/device_scope.hpp"

namespace cudaconv {

void GpuDecoding::open() {
    std::call_once(opened_, [this] {
        const auto start = std::chrono::steady_clock::now();
        try {
            std::optional<DeviceScope> scope;
            if (device_ >= 0) scope.emplace(device_);
            decoder_ = std::make_unique<GpuJpegBatch>();
            spdlog::debug(
                "decoding JPEG on the GPU with {} (started in {:.0f} ms)", decoder_->name(),
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                    .count());
        } catch (const std::exception& e) {
            problem_ = e.what();
            spdlog::debug("JPEG is decoded on the CPU: the GPU's decoder cannot start ({})",
                          problem_);
        }
        ready_.store(true, std::memory_order_release);
    });
}

void GpuDecoding::open_or_refuse(int device) {
    device_ = device;
    open();
    if (!decoder_) {
        throw UsageError(fmt::format("--decoder gpu: the GPU cannot decode here: {} (--decoder "
                                     "auto or cpu decodes on the CPU)",
                                     problem_));
    }
}

void GpuDecoding::open_in_background(int device) {
    device_ = device;
    if (!opener_.start([this] { open(); })) open();
}

void GpuDecoding::set_lanes(std::size_t lanes, std::size_t devices) {
    device_count_ = std::clamp<std::size_t>(devices, 1, std::max<std::size_t>(1, lanes));
    devices_ = std::vector<Device>(device_count_ - 1);
}

void GpuDecoding::start_lane(std::size_t lane) {
    std::string problem;
    lane_decoder(lane, problem);
}

GpuJpegBatch* GpuDecoding::lane_decoder(std::size_t lane, std::string& problem) {
    const std::size_t device = device_slot(lane, device_count_);
    if (device == 0) {
        problem = problem_;
        return decoder_.get();
    }
    const std::lock_guard<std::mutex> lock(devices_mutex_);
    Device& own = devices_.at(device - 1);
    if (!own.tried) {
        own.tried = true;
        try {
            own.decoder = std::make_unique<GpuJpegBatch>();  // on the lane's device
        } catch (const std::exception& e) {
            own.problem = e.what();
            spdlog::debug("lane {}: JPEG is decoded on the CPU: the GPU's decoder cannot start "
                          "({})",
                          lane, own.problem);
        }
    }
    problem = own.problem;
    return own.decoder.get();
}

std::optional<JpegInspection> GpuDecoding::take(const EncodedImage& image, std::string& why_not) {
    if (!image.is_jpeg) {
        why_not = "not a JPEG";
        return std::nullopt;
    }
    if (image.orientation != kUpright) {
        why_not = fmt::format("EXIF orientation {}: turned upright on the CPU", image.orientation);
        return std::nullopt;
    }
    if (!ready_.load(std::memory_order_acquire)) {
        why_not = "nvJPEG is still starting";
        return std::nullopt;
    }
    if (!decoder_) {
        why_not = problem_;
        return std::nullopt;
    }
    JpegInspection inspection = decoder_->inspect(image.bytes.data(), image.bytes.size());
    if (!inspection.refusal.empty()) {
        why_not = inspection.refusal;
        return std::nullopt;
    }
    return inspection;
}

void GpuDecoding::log_buffers() const {
    if (decoder_) {
        spdlog::debug("GPU JPEG decoding's image buffers: {}", decoder_->buffers_summary());
    }
    for (std::size_t k = 0; k < devices_.size(); ++k) {
        if (!devices_[k].decoder) continue;
        spdlog::debug("GPU JPEG decoding's image buffers, device slot {}: {}", k + 1,
                      devices_[k].decoder->buffers_summary());
    }
}

void GpuDecoding::keep_until_exit() {
    opener_.join();  // open() has ended: decoder_ is set or stays null
    static_cast<void>(decoder_.release());
    for (Device& device : devices_) static_cast<void>(device.decoder.release());
}

std::string GpuDecoding::decoder_name(std::size_t lane) const {
    const std::size_t device = device_slot(lane, device_count_);
    const GpuJpegBatch* decoder = device == 0 ? decoder_.get()
                                              : devices_.at(device - 1).decoder.get();
    return decoder ? std::string(decoder->name()) : std::string("cpu");
}

void GpuDecoding::decode_group(std::size_t lane, const std::vector<GpuJpegImage*>& images) {
    std::string problem;
    GpuJpegBatch* decoder = lane_decoder(lane, problem);
    if (!decoder) {
        for (GpuJpegImage* image : images) image->error = "the GPU's decoder: " + problem;
        return;
    }
    std::size_t next = 0;
    while (next < images.size()) {
        std::vector<GpuJpegImage*> call;
        std::size_t bytes = 0;
        std::size_t largest = 1;  // bytes of the call's largest image (divided by below)
        for (; next < images.size(); ++next) {
            const JpegInspection& in = images[next]->inspection;
            const std::size_t image_bytes = static_cast<std::size_t>(in.width) *
                                            static_cast<std::size_t>(in.height) *
                                            static_cast<std::size_t>(in.channels);
            if (!call.empty() && bytes + image_bytes > kGroupBytes) break;
            bytes += image_bytes;
            largest = std::max(largest, image_bytes);
            call.push_back(images[next]);
        }
        // A group's calls hold this many such images at most.
        const std::size_t images_per_call =
            std::clamp<std::size_t>(kGroupBytes / largest, 1, kGroupImages);
        const auto start = std::chrono::steady_clock::now();
        try {
            decoder->decode(call, images_per_call);
            spdlog::trace(
                "{}: {} JPEGs decoded in {:.2f} ms", decoder->name(), call.size(),
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                    .count());
        } catch (const std::exception& e) {
            for (GpuJpegImage* image : call) {
                image->device_pixels.reset();
                image->error = e.what();
            }
        }
    }
}

}  // namespace cudaconv
