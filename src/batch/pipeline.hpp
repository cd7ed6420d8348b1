#pragma once
// The batch executor. Worker threads decode, encode and write; a CPU
// variant filters on the worker that decoded the image; CUDA variants
// filter on a GPU thread, which owns the device work (one CUDA context,
// and the buffers it keeps between images of one size). Where the stages
// have gpu_group or prepare_for_gpu, a thread of its own runs them on the
// images before the GPU thread takes them: gpu_group on several at a time
// (the GPU's JPEG decoder), then prepare_for_gpu on each. While the GPU
// thread filters one image, the workers decode the next ones and encode
// the previous ones. A worker with a filtered image waiting encodes it
// before decoding another, and at most max_in_flight images are between
// decode and written, so memory stays bounded however long the batch.
//
// Several GPU threads (PipelineOptions::lanes: one or two a device,
// batch/devices.hpp), each a lane with, where the stages have them, a
// thread before it. Images bound
// for the GPU wait in one queue that every lane takes from when it has
// room (work stealing): a lane takes an image only once its GPU thread has
// started (enter_lane) and while fewer than two images wait for its GPU
// thread, so a slower or later device takes fewer images and holds few at
// the end. Each image's `lane` says which lane took it.
//
// A lane whose device is lost (its filter throws DeviceLost) is retired
// while another lane runs: the image, and those its threads hold, go back
// to the shared queue for the other lanes, so a broken device does not
// fail the images that healthy ones would finish.
//
// Stops early when `stop` says so (Ctrl-C): no new image is decoded, an
// image not yet encoding is dropped, encodes under way finish. A stage that
// throws Cancelled (a decode abandoned on that request) drops its image.
#include <cstddef>
#include <functional>
#include <stdexcept>
#include <memory>
#include <string>
#include <vector>

namespace cudaconv {

// One image on its way; the stages keep what they need in a subclass.
struct WorkItem {
    virtual ~WorkItem() = default;
    // The pipeline's number for the image, 0 .. count - 1, as passed to
    // decode; the pipeline sets it after decode, so a stage cannot change it.
    std::size_t index = 0;
    bool on_gpu = false;  // set by decode: filter on the GPU thread
    // The lane (device) whose threads took it, 0 .. lanes - 1; set by the
    // pipeline as a lane takes it, before gpu_group and prepare_for_gpu.
    std::size_t lane = 0;
    // Set before encode: the threads it may use. 1 while images remain to
    // be decoded (every worker has work); at the batch's end, when workers
    // run out of images, the cores they leave are shared among the images
    // still under way, so that the last ones do not encode on one core
    // each while the rest wait.
    int encode_threads = 1;
};

// Thrown by a stage when an image turns out to need no work after all
// (--skip-existing, and an output that is named only once the image is
// decoded): reported through `skipped` with the message, not as a failure.
struct SkipImage : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Thrown by filter on a lane's GPU thread when the lane's device can run
// nothing more (a CUDA error that stays with the context): not the image's
// fault. Where another lane runs, the lane is retired and the image goes to
// another; on the last lane running it is the image's failure, as any error.
struct DeviceLost : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct PipelineStages {
    // On a worker: read and decode, and say where to filter.
    std::function<std::unique_ptr<WorkItem>(std::size_t index)> decode;
    std::function<void(WorkItem&)> filter;  // on a worker, or the GPU thread
    // Optional: an image bound for the GPU thread goes through this first,
    // on a thread of its own, in order (the batch copies it into page-locked
    // memory, batch/pinned_slots.hpp). It may wait, for a slot the GPU
    // thread gives back.
    std::function<void(WorkItem&)> prepare_for_gpu;
    // Optional: what is done for several images bound for the GPU thread
    // at once (the GPU's JPEG decoder), on the thread before it: called
    // with the images queued there, one at least and at most
    // PipelineOptions::gpu_group of them, in order, before prepare_for_gpu
    // and filter take each. It must not throw: what fails for one image it
    // keeps in the image, for filter to deal with. An image a retired lane
    // gave back (DeviceLost) comes through it and prepare_for_gpu again, on
    // another lane.
    std::function<void(const std::vector<WorkItem*>&)> gpu_group;
    // Optional: called on a lane's GPU thread before it takes an image:
    // what binds the thread to the lane's device and starts that device
    // (kernels/runtime/device_scope.hpp). It must not throw; it may take
    // long (a device's start-up), while the other lanes take the images.
    // False (its device cannot start) leaves the lane out: it takes no
    // image. Where no lane starts, lane 0 runs all the same (the batch
    // needs one) and its images fail as the device makes them.
    std::function<bool(std::size_t lane)> enter_lane;
    // Optional: called on the thread before a lane's GPU thread, once
    // enter_lane has started the lane, before it takes an image: binds the
    // thread to the lane's device, and no more. It must not throw.
    std::function<void(std::size_t lane)> bind_lane;
    // Optional: a lane left out while another runs, said once: its start
    // failed (enter_lane said no; `lost` is empty), or its device was lost
    // (`lost`: DeviceLost's message). The other lanes take its images.
    std::function<void(std::size_t lane, const std::string& lost)> left_lane;
    std::function<void(WorkItem&)> encode;  // on a worker: encode and write
    // Exactly one of these per index taken (done, failed, skipped,
    // dropped); they may be called from any thread, at the same time.
    std::function<void(WorkItem&)> done;
    std::function<void(std::size_t index, const std::string& error)> failed;
    std::function<void(std::size_t index, const std::string& why)> skipped;
    std::function<void(std::size_t index)> dropped;
    std::function<bool()> stop;  // polled
};

struct PipelineOptions {
    std::size_t count = 0;  // indices 0..count-1, decoded in order
    int workers = 1;        // -j (fewer run where the system will not start that many)
    std::size_t max_in_flight = 1;
    std::size_t gpu_group = 1;  // the most images gpu_group is given at once
    std::size_t lanes = 1;      // GPU threads (with their threads before): one or two a device
    // Of max_in_flight, the images held for each lane past one: a lane left
    // out (its start failed, its device lost) gives them back.
    std::size_t in_flight_per_lane = 0;
};

// Failures of one image go to `failed` and the rest go on. A UsageError
// from a stage (a variant named with -k cannot run an image) stops the
// batch like an interrupt and is rethrown once the workers are done.
// Where the system will not start a lane's GPU thread or the thread before
// it, or a first worker, no image is taken and a WorkError says so; where it starts
// fewer workers than asked, the batch runs on half of those, with a warning.
void run_pipeline(const PipelineStages& stages, const PipelineOptions& options);

}  // namespace cudaconv
