#pragma once
// What every CUDA variant shares: the device check, buffers, upload and
// download (straight from and to the image's rows), and timing with CUDA
// events. A variant supplies only what differs: which jobs it takes, what
// it prepares (taps in constant memory, FFT plans, ...) and its launch.
#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "core/backend.hpp"
#include "kernels/runtime/device_info.hpp"
#include "kernels/runtime/device_job.hpp"

namespace cudaconv {

class CudaBackend : public Backend {
public:
    bool uses_cuda() const final { return true; }
    // No device, or too little memory, or whatever the variant refuses.
    Support can_run(const Job& job) const final;
    RunTimings run(const Job& job, const RunOptions& options) final;

protected:
    // The variant's own limits, for a job that the device has room for.
    virtual Support check_job(const Job& job, const DeviceInfo& device) const = 0;
    // Device bytes the variant needs beyond the input, output and taps.
    virtual std::size_t extra_device_bytes(const Job&) const { return 0; }
    // Once per run, untimed: e.g. taps to constant memory, plans.
    virtual void prepare(const Job&, const DeviceJob&, cudaStream_t) {}
    // One filtering of job.src into job.dst; timed by the caller.
    virtual void launch(const DeviceJob& job, cudaStream_t stream) = 0;
    // After the last launch: free what prepare() made.
    virtual void finish() {}
};

// Frees what the fft variant keeps on this thread between runs of one shape
// and filter (kernels/fft.cu), so that another variant's run has the device
// memory its check counted on. A no-op when fft kept nothing.
void release_fft_state();

// Copies of the input and output that the launches of one run rotate over
// (RunOptions::rotate_bytes): enough that the copies together span
// rotate_bytes, but at most kMaxRotationCopies, and the extra copies (all
// but the first) within spare_bytes. 1 when rotate_bytes is 0 or nothing
// more fits.
// 64 pairs of the smallest default bench image (780x585 RGB u8, 2.7 MB)
// span 175 MB, beyond twice the H100's 50 MB L2.
constexpr std::size_t kMaxRotationCopies = 64;
std::size_t rotation_copies(std::size_t rotate_bytes, std::size_t pair_bytes,
                            std::size_t spare_bytes);

// The device the CUDA variants run on: the first one. Throws CudaError
// when there is none, so run() without can_run() still fails cleanly.
const DeviceInfo& current_device();

// Blocks of `kernel` (`threads` a block, `shared_bytes` of dynamic shared
// memory) that current_device() runs at once: its SMs times the blocks an
// SM holds, each at least 1. Kernels past 48 KB of shared memory set their
// limit (cudaFuncSetAttribute) first.
int resident_blocks(const void* kernel, int threads, std::size_t shared_bytes);

}  // namespace cudaconv
