#include "kernels/codecs/nvjpeg_handle.hpp"

#include <cuda_runtime.h>

#include <map>
#include <memory>
#include <mutex>

namespace cudaconv {
namespace {

struct Offers {
    std::mutex mutex;
    std::map<int, std::weak_ptr<NvjpegHandle>> by_device;
};

Offers& offers() {
    static Offers kOffers;
    return kOffers;
}

// The calling thread's device, or -1 where CUDA cannot say (nothing is
// then offered or taken).
int current_device() {
    int device = -1;
    if (cudaGetDevice(&device) != cudaSuccess) {
        cudaGetLastError();  // cleared: the caller's next call should not see it
        return -1;
    }
    return device;
}

}  // namespace

void offer_device_handle(const std::shared_ptr<NvjpegHandle>& handle) {
    const int device = current_device();
    if (device < 0) return;
    Offers& all = offers();
    const std::lock_guard<std::mutex> lock(all.mutex);
    all.by_device[device] = handle;
}

std::shared_ptr<NvjpegHandle> offered_device_handle() {
    const int device = current_device();
    if (device < 0) return nullptr;
    Offers& all = offers();
    const std::lock_guard<std::mutex> lock(all.mutex);
    const auto offer = all.by_device.find(device);
    return offer == all.by_device.end() ? nullptr : offer->second.lock();
}

}  // namespace cudaconv
