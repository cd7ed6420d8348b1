#include "kernels/codecs/nvjpeg_handle.hpp"

#include <map>
#include <memory>
#include <mutex>

#include "kernels/runtime/cuda_host.hpp"

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

}  // namespace

void offer_device_handle(const std::shared_ptr<NvjpegHandle>& handle) {
    const int device = runtime_device();  // -1: nothing offered or taken
    if (device < 0) return;
    Offers& all = offers();
    const std::lock_guard<std::mutex> lock(all.mutex);
    all.by_device[device] = handle;
}

std::shared_ptr<NvjpegHandle> offered_device_handle() {
    const int device = runtime_device();  // -1: nothing offered or taken
    if (device < 0) return nullptr;
    Offers& all = offers();
    const std::lock_guard<std::mutex> lock(all.mutex);
    const auto offer = all.by_device.find(device);
    return offer == all.by_device.end() ? nullptr : offer->second.lock();
}

}  // namespace cudaconv
