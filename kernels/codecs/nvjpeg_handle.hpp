#pragma once
// An nvJPEG library handle shared by a device's JPEG decoder and its GPU
// threads' JPEG encoders. Making a handle is one of nvJPEG's slow calls
// (docs/PERFORMANCE.md times it), and nvJPEG lets several threads use one
// handle at once (its states, not its handles, belong to one thread). So
// the decoder offers its handle, and an encoder made on the same device
// while the handle lives takes it instead of making one of its own, out
// of the batch's first image's way. A handle is bound to the device that
// was current where it was made.
#include <memory>
#include <utility>

#include "kernels/codecs/nvjpeg_api.hpp"

namespace cudaconv {

class NvjpegHandle {
public:
    // Takes `handle`, which nvjpegDestroy ends with the last owner.
    NvjpegHandle(std::shared_ptr<const nvj::Api> api, nvj::nvjpegHandle_t handle)
        : api_(std::move(api)), handle_(handle) {}
    ~NvjpegHandle() { api_->nvjpegDestroy(handle_); }
    NvjpegHandle(const NvjpegHandle&) = delete;
    NvjpegHandle& operator=(const NvjpegHandle&) = delete;

    nvj::nvjpegHandle_t get() const { return handle_; }

private:
    std::shared_ptr<const nvj::Api> api_;
    nvj::nvjpegHandle_t handle_;
};

// Offers `handle` to what is made later on the calling thread's device,
// for as long as it lives (the offer holds no reference).
void offer_device_handle(const std::shared_ptr<NvjpegHandle>& handle);

// The live handle offered on the calling thread's device, or null.
std::shared_ptr<NvjpegHandle> offered_device_handle();

}  // namespace cudaconv
