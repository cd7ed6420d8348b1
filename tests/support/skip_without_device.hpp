#pragma once
// GPU tests start with `if (skip_without_device()) return;`: without a
// device they print the line CTest's SKIP_REGULAR_EXPRESSION matches
// (tests/CMakeLists.txt) and pass as skipped.
#include <iostream>

#include "kernels/runtime/device_info.hpp"

namespace cudaconv::test {

inline bool skip_without_device() {
    const DeviceProbe& probe = probe_devices();
    if (!probe.devices.empty()) return false;
    std::cout << "SKIPPED: no CUDA device (" << probe.problem << ")\n";
    return true;
}

// For the tests of a machine without a GPU: skipped where there is one,
// with a line CTest's SKIP_REGULAR_EXPRESSION matches too.
inline bool skip_with_device() {
    if (probe_devices().devices.empty()) return false;
    std::cout << "SKIPPED: a CUDA device is here; this test is for a machine without one\n";
    return true;
}

// For the tests of several devices (--devices): skipped on fewer than two.
inline bool skip_without_two_devices() {
    if (skip_without_device()) return true;
    if (probe_devices().devices.size() >= 2) return false;
    std::cout << "SKIPPED: one CUDA device; this test needs two\n";
    return true;
}

}  // namespace cudaconv::test
