#pragma once
// Hopper's bulk-copy engine (the TMA) from CUDA C++: one thread asks for a
// run of bytes from global into shared memory and goes on; the copy signals
// an mbarrier in shared memory when its bytes have landed, and the block
// waits on the barrier's phase. Many bytes are then in flight for a few
// instructions and no registers, which is what a memory-bound kernel needs
// to cover DRAM latency (kernels/fast/fast.cu). sm_90 and later: built for an
// older target the helpers trap, and fast refuses such devices.
//
// The barriers here count one arrival per phase: the issuing thread's
// arrive.expect_tx, which also tells the barrier how many bytes to await.
// Copies that land before it count down from zero (the transaction count
// may go negative), and the phase cannot complete before that arrival, so
// the order among the issuing lanes does not matter.
#include <cstdint>

#include "kernels/device/device_common.cuh"

namespace cudaconv {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define CUDACONV_BULK_COPY(...) __trap()
#else
#define CUDACONV_BULK_COPY(...) asm volatile(__VA_ARGS__)
#endif

// Once, by one thread, before a __syncthreads() that publishes it.
__device__ __forceinline__ void barrier_init(std::uint64_t* barrier, std::uint32_t arrivals) {
    CUDACONV_BULK_COPY("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(shared_address(barrier)),
                       "r"(arrivals)
                       : "memory");
    // Makes the initialised barrier visible to the copy engine too.
    CUDACONV_BULK_COPY("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// The arrival of this phase, awaiting `bytes` from bulk copies.
__device__ __forceinline__ void barrier_arrive_expect(std::uint64_t* barrier, std::uint32_t bytes) {
    CUDACONV_BULK_COPY(
        "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(barrier)),
        "r"(bytes)
        : "memory");
}

// Waits until the barrier's phase of this parity (0, 1, 0, ... for its
// first, second, third use) has completed.
__device__ __forceinline__ void barrier_wait(std::uint64_t* barrier, std::uint32_t parity) {
    CUDACONV_BULK_COPY("{\n"
                       "  .reg .pred done;\n"
                       "  WAIT_%=:\n"
                       "  mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                       "  @!done bra WAIT_%=;\n"
                       "}\n" ::"r"(shared_address(barrier)),
                       "r"(parity)
                       : "memory");
}

// Orders this thread's earlier shared-memory accesses (reads and ordinary
// writes, made visible to it by a __syncthreads()) before bulk copies it
// issues next into the same bytes.
__device__ __forceinline__ void fence_before_bulk_copy() {
    CUDACONV_BULK_COPY("fence.proxy.async.shared::cta;" ::: "memory");
}

// bytes (a multiple of 16) from global src to shared dst, both 16-byte
// aligned; completes on barrier.
__device__ __forceinline__ void bulk_copy_to_shared(void* dst, const void* src, std::uint32_t bytes,
                                                    std::uint64_t* barrier) {
    CUDACONV_BULK_COPY(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::
            "r"(shared_address(dst)),
        "l"(src), "r"(bytes), "r"(shared_address(barrier))
        : "memory");
}

}  // namespace cudaconv
