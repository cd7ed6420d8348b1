#include "kernels/runtime/pinned_staging.hpp"

#include <cuda_runtime.h>

#include <memory>

#include "kernels/runtime/cuda_check.hpp"

namespace cudaconv {
namespace {

struct FreeHost {
    void operator()(std::byte* p) const { cudaFreeHost(p); }
};

struct Staging {
    std::unique_ptr<std::byte, FreeHost> memory;
    std::size_t bytes = 0;
};

thread_local Staging t_staging;

}  // namespace

std::byte* pinned_staging(std::size_t bytes) {
    Staging& s = t_staging;
    if (!s.memory || s.bytes < bytes) {
        const std::size_t grown = bytes + bytes / 4 + 4096;
        s.memory.reset();  // cudaFreeHost first: page-locked memory is scarcer than address space
        s.bytes = 0;
        void* p = nullptr;
        CUDA_CHECK(cudaHostAlloc(&p, grown, cudaHostAllocDefault));
        s.memory.reset(static_cast<std::byte*>(p));
        s.bytes = grown;
    }
    return s.memory.get();
}

}  // namespace cudaconv
