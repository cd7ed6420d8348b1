#pragma once
// Owners for CUDA resources, shared by every variant, so an exception in
// the middle of a run frees everything it had made.
#include <cuda_runtime.h>

#include <cstddef>
#include <memory>

#include "kernels/runtime/cuda_check.hpp"

namespace cudaconv {

struct DeviceFree {
    void operator()(void* p) const { cudaFree(p); }
};
template <typename T>
using DeviceArray = std::unique_ptr<T, DeviceFree>;

// `count` elements of T in device memory (at least one byte, so a zero-size
// job still gets a valid pointer).
template <typename T, typename Count>
DeviceArray<T> device_array(Count count) {
    void* p = nullptr;
    const std::size_t bytes = static_cast<std::size_t>(count) * sizeof(T);
    CUDA_CHECK(cudaMalloc(&p, bytes == 0 ? 1 : bytes));
    return DeviceArray<T>(static_cast<T*>(p));
}

class Stream {
public:
    Stream() { CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
    ~Stream() { cudaStreamDestroy(stream_); }
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    cudaStream_t get() const { return stream_; }

private:
    cudaStream_t stream_{};
};

class Event {
public:
    Event() { CUDA_CHECK(cudaEventCreate(&event_)); }
    ~Event() { cudaEventDestroy(event_); }
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
    cudaEvent_t get() const { return event_; }

private:
    cudaEvent_t event_{};
};

}  // namespace cudaconv
