#pragma once
// What CUDA devices this machine has. The first call initialises the CUDA
// runtime; nothing else in a CPU-only run calls it, so `--help` and CPU
// filtering never pay for CUDA start-up.
#include <cstddef>
#include <string>
#include <vector>

namespace cudaconv {

struct DeviceInfo {
    int index = 0;
    std::string name;
    int cc_major = 0;
    int cc_minor = 0;
    int multiprocessors = 0;
    std::size_t global_memory_bytes = 0;
    std::size_t l2_bytes = 0;
    std::size_t constant_memory_bytes = 0;
    std::size_t shared_memory_per_block_optin = 0;
};

struct DeviceProbe {
    std::vector<DeviceInfo> devices;
    std::string problem;  // why there are none ("no CUDA driver", ...), else empty
};

// Probes once per process and caches the answer.
const DeviceProbe& probe_devices();

// The devices the probe found, by CUDA's numbers, in its order: what
// --devices chooses from (src/batch/devices.hpp).
inline std::vector<int> device_numbers(const DeviceProbe& probe) {
    std::vector<int> numbers;
    for (const DeviceInfo& device : probe.devices) numbers.push_back(device.index);
    return numbers;
}

// The device the probe found with CUDA's number `index`; nullptr where none.
inline const DeviceInfo* find_device(const DeviceProbe& probe, int index) {
    for (const DeviceInfo& device : probe.devices) {
        if (device.index == index) return &device;
    }
    return nullptr;
}

}  // namespace cudaconv
