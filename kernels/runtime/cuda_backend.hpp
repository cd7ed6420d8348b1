#pragma once
// What every CUDA variant shares: the device check, buffers, upload and
// download (straight from and to the image's rows), and timing with CUDA
// events. A variant supplies only what differs: which jobs it takes, what
// it prepares (taps in constant memory, FFT plans, ...) and its launch.
#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/auto_select.hpp"
#include "core/backend.hpp"
#include "core/chain_bands.hpp"
#include "core/chain_edges.hpp"
#include "core/device_job.hpp"
#include "kernels/runtime/device_info.hpp"

namespace cudaconv {

// What one run of a CUDA variant prepared (taps in constant memory, plans,
// scratch buffers): made before the run's first launch, used by each of its
// launches, destroyed after the last. The variant objects keep no state of
// a job, so that two threads can run the same variant at once; variants
// whose taps live in a __constant__ symbol hold that symbol's lock
// (ConstantTapsLock) in their plan, so such runs take turns.
class LaunchPlan {
public:
    virtual ~LaunchPlan() = default;
    // One filtering of job.src into job.dst; timed by the caller.
    virtual void launch(const DeviceJob& job, cudaStream_t stream) const = 0;
    // The named path that runs, for a composite variant (RunTimings::path).
    virtual std::string_view path() const { return {}; }
};

// The current device's __constant__ (and __device__) tap symbols, held by
// a run from its copy into them to its last launch on `stream`. Runs take
// turns twice over: on the host (a mutex a device), and on the device,
// where the holder's stream first waits for the launches the one before
// queued on its own stream, so that a copy on one stream never lands
// while another stream's kernel still reads the taps (two GPU threads a
// device, docs/ARCHITECTURE.md "A batch"). Letting go marks the
// end of the holder's launches on its stream, then unlocks.
class ConstantTapsLock {
public:
    ConstantTapsLock() = default;
    explicit ConstantTapsLock(cudaStream_t stream);
    ConstantTapsLock(ConstantTapsLock&& other) noexcept;
    ConstantTapsLock& operator=(ConstantTapsLock&& other) noexcept;
    ~ConstantTapsLock() { release(); }

    struct DeviceTaps;  // a device's mutex, and the event its last holder left

private:
    void release() noexcept;

    DeviceTaps* taps_ = nullptr;
    cudaStream_t stream_ = nullptr;
};

inline ConstantTapsLock lock_constant_taps(cudaStream_t stream) { return ConstantTapsLock(stream); }

// A plan that is a launch function and nothing else: for the variants that
// prepare nothing, or only constant memory (`lock` then held with it).
template <typename Launch>
std::unique_ptr<LaunchPlan> launch_only(Launch launch, ConstantTapsLock lock = {}) {
    class Plan final : public LaunchPlan {
    public:
        Plan(Launch launch, ConstantTapsLock lock)
            : launch_(std::move(launch)), lock_(std::move(lock)) {}
        void launch(const DeviceJob& job, cudaStream_t stream) const override {
            launch_(job, stream);
        }

    private:
        Launch launch_;
        ConstantTapsLock lock_;
    };
    return std::make_unique<Plan>(std::move(launch), std::move(lock));
}

// A plan that writes the __constant__ taps on `stream`: `prepare` runs
// under the taps' lock and returns the launch function, and the plan keeps
// the lock.
template <typename Prepare>
std::unique_ptr<LaunchPlan> plan_with_constant_taps(cudaStream_t stream, Prepare prepare) {
    ConstantTapsLock lock = lock_constant_taps(stream);
    return launch_only(prepare(), std::move(lock));
}

// The job as the device sees it, without its buffers (src, dst and taps
// null, pitches 0): what the paths' checks read before a run.
DeviceJob device_job_of(const Job& job);

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
    // Once per run, untimed: what the launches need (taps to constant
    // memory, plans, buffers), with `tuning` in place of the rules' choices.
    virtual std::unique_ptr<LaunchPlan> plan(const Job& job, const DeviceJob& device_job,
                                             const Tuning& tuning, cudaStream_t stream) const = 0;
    // Whether the variant keeps fft's plans between runs (the fft variant):
    // the others free them first, so that they have the memory their check
    // counted on.
    virtual bool keeps_fft_state() const { return false; }

private:
    // A filter chain on the device (RunOptions::later_steps).
    struct LaterStep;
    // Places the chain's images between steps in kept device buffers, and
    // each later step's taps: `first` (this run's own step) writes the
    // first of them, the last step writes `d_out`.
    void place_chain(const Job& job, const RunOptions& options, std::byte* d_out,
                     std::size_t out_row, DeviceJob& first, std::vector<LaterStep>& later,
                     cudaStream_t stream) const;
    // A chain run as the one filter inside and its steps on the bands
    // (core/chain_bands.hpp, core/chain_edges.hpp).
    struct BandedChain {
        ChainBands bands;
        ChainEdges edges;
    };
    // How this run's chain (RunOptions::later_steps) runs so; none where
    // its steps run one after another: a step on another variant, a chain
    // chain_bands or chain_edges does not take, or a one filter this
    // variant refuses or does not run as one (runs_as_one_filter).
    std::optional<BandedChain> banded_chain(const Job& job, const RunOptions& options) const;
    // --warmup plus --repeat runs of such a chain, each timed: the one
    // filter over the whole image, from `whole`'s input into its output,
    // then the steps on the bands over it.
    void run_banded_chain(const Job& job, const RunOptions& options, const BandedChain& banded,
                          const DeviceJob& whole, RunTimings& timings, cudaStream_t stream) const;
    // --warmup plus --repeat runs of the whole chain, each timed.
    void run_chain_launches(const Job& job, const RunOptions& options, const DeviceJob& first,
                            std::vector<LaterStep>& later, RunTimings& timings,
                            cudaStream_t stream) const;
};

// Frees what the fft variant keeps on this thread between runs of one shape
// and filter (kernels/fft/fft.cu), so that another variant's run has the device
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

// The device the calling thread's CUDA work runs on: its DeviceScope's
// (kernels/runtime/device_scope.hpp), else the run's default, else the
// first one. Throws CudaError when there is none, so run() without
// can_run() still fails cleanly.
const DeviceInfo& current_device();

// What a kernel's launches ask of the device once, kept a device: the
// value `ask` gives on current_device() the first time a thread on that
// device needs it (a kernel's shared-memory opt-in, which CUDA holds a
// device, and its resident blocks, which the device's SMs decide).
template <typename T>
class PerDevice {
public:
    template <typename Ask>
    T get(Ask ask) {
        const int device = current_device().index;
        const std::lock_guard<std::mutex> lock(mutex_);
        for (const auto& [index, value] : values_) {
            if (index == device) return value;
        }
        T value = ask();
        values_.emplace_back(device, value);
        return value;
    }

private:
    std::mutex mutex_;
    std::vector<std::pair<int, T>> values_;
};

// Blocks of `kernel` (`threads` a block, `shared_bytes` of dynamic shared
// memory) that current_device() runs at once: its SMs times the blocks an
// SM holds, each at least 1. Kernels past 48 KB of shared memory set their
// limit (cudaFuncSetAttribute) first.
int resident_blocks(const void* kernel, int threads, std::size_t shared_bytes);

}  // namespace cudaconv
