// No CUDA here: a build without the toolkit has the same scopes, with no
// device to choose.
#include "kernels/runtime/device_scope.hpp"

#include <atomic>

namespace cudaconv {
namespace {

thread_local int t_device = -1;
std::atomic<int> g_default_device{-1};

}  // namespace

DeviceScope::DeviceScope(int device) : previous_(t_device) { t_device = device; }

DeviceScope::~DeviceScope() { t_device = previous_; }

void set_thread_device(int device) { t_device = device; }

int thread_device() {
    return t_device >= 0 ? t_device : g_default_device.load(std::memory_order_relaxed);
}

void set_default_device(int device) { g_default_device.store(device, std::memory_order_relaxed); }

}  // namespace cudaconv
