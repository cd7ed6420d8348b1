#pragma once
// What every CUDA variant shares: the device check, buffers, upload and
// download from pinned host memory, and timing with CUDA events. A variant
// supplies only what differs: which jobs it takes, what it prepares (taps
// in constant memory, FFT plans, ...) and its kernel launch.
#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "core/backend.hpp"
#include "kernels/device_info.hpp"
#include "kernels/device_job.hpp"

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

// The device the CUDA variants run on: the first one. Throws CudaError
// when there is none, so run() without can_run() still fails cleanly.
const DeviceInfo& current_device();

}  // namespace cudaconv
