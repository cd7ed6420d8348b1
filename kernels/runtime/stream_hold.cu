#include "kernels/runtime/stream_hold.hpp"

#include <atomic>
#include <cstdint>

#include "kernels/runtime/cuda_check.hpp"

namespace cudaconv {
namespace {

// Long enough for any host to queue a launch, short enough that a launch
// which waits on the device (and so on this kernel) fails soon.
constexpr std::uint64_t kHoldTimeoutNs = 1'000'000'000;

__device__ __forceinline__ std::uint64_t global_ns() {
    std::uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void hold_kernel(volatile int* flags) {
    const std::uint64_t start = global_ns();
    while (flags[0] == 0) {
        if (global_ns() - start > kHoldTimeoutNs) {
            flags[1] = 1;
            return;
        }
        __nanosleep(1000);
    }
}

}  // namespace

StreamHold::StreamHold() {
    void* p = nullptr;
    CUDA_CHECK(cudaHostAlloc(&p, 2 * sizeof(int), cudaHostAllocMapped));
    flags_ = static_cast<volatile int*>(p);
    flags_[0] = 1;  // released: nothing held yet
    flags_[1] = 0;
    void* device_flags = nullptr;
    if (const cudaError_t status = cudaHostGetDevicePointer(&device_flags, p, 0);
        status != cudaSuccess) {
        cudaFreeHost(p);  // the destructor does not run for a constructor that throws
        throw_cuda_error(status, "cudaHostGetDevicePointer", __FILE__, __LINE__);
    }
    device_flags_ = static_cast<volatile int*>(device_flags);
}

StreamHold::~StreamHold() {
    // The kernel may still be waiting (an exception between hold and
    // release): let it go before its flags are freed. cudaFreeHost waits
    // for the device.
    flags_[0] = 1;
    cudaFreeHost(const_cast<int*>(flags_));
}

void StreamHold::hold(cudaStream_t stream) {
    flags_[0] = 0;
    flags_[1] = 0;
    hold_kernel<<<1, 1, 0, stream>>>(device_flags_);
    CUDA_CHECK_LAUNCH();
}

void StreamHold::release() {
    // After everything the host queued behind the hold.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    flags_[0] = 1;
}

bool StreamHold::timed_out() const { return flags_[1] != 0; }

}  // namespace cudaconv
