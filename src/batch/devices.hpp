#pragma once
// --devices all|N|LIST: the GPUs one batch filters on (docs/SPEC.md,
// docs/SCALING.md). Pure functions of the option's text, the devices CUDA
// reports and the batch's size, so that they can be tested without a GPU.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cudaconv {

// The most devices --devices names, past any one machine: a count up to
// it, device numbers below it (0 to kMaxDevices - 1, as CUDA numbers that
// many).
constexpr int kMaxDevices = 1024;

struct DeviceRequest {
    enum class Kind {
        automatic,  // not given: the first device
        all,        // every device CUDA reports (none: the batch runs without)
        count,      // the first `count`
        list,       // these, by CUDA's numbers (CUDA_VISIBLE_DEVICES applies first)
    };
    Kind kind = Kind::automatic;
    int count = 0;
    std::vector<int> indices;
    std::string text;  // as given, for messages

    bool given() const { return kind != Kind::automatic; }
};

// The option's value: "all", a count N >= 1, or two or more distinct
// device numbers separated by commas ("0,2"). Throws UsageError, one line
// naming the value and what is wrong (0, -1, a, 0,0, 1,,2, ""). Not given,
// the request is DeviceRequest{} (automatic).
DeviceRequest parse_devices(const std::string& text);

// The devices a batch of `images` runs on, by CUDA's numbers, from those
// present (`present`, as the probe lists them; `problem` says why there
// are none): a count or list that asks for devices not present is a
// UsageError naming those there are; all of them under `all`; the first
// under automatic (measured on two H100s, a second device made no batch
// faster: docs/PERFORMANCE.md, "Several GPUs"). Empty where none is
// present (the batch then runs on the CPU).
std::vector<int> choose_devices(const DeviceRequest& request, const std::vector<int>& present,
                                const std::string& problem);

// GPU threads a batch runs on each device (the pipeline's lanes,
// batch/pipeline.hpp): two in a batch that runs on a GPU, so that one
// thread's upload, filter, encode and download overlap the other's, and
// each has a thread before it copying its next image into page-locked
// memory (docs/PERFORMANCE.md "Two GPU threads a device"); one for one
// image, or where nothing runs on a GPU. Where JPEGs are decoded on the GPU
// (--decoder), the device's decoder bounds the batch unless its outputs
// are PNGs, whose rows the GPU thread compresses (4 ms an image, against
// 1 ms for a JPEG): two threads, sharing the decoder, for PNG outputs
// (`png_outputs`), one for others, which a second thread only slowed.
constexpr std::size_t kGpuThreadsPerDevice = 2;
std::size_t gpu_threads_per_device(bool runs_on_gpu, bool gpu_decode, bool png_outputs,
                                   std::size_t images);

// The batch's lanes: `threads` for each of `devices` devices (none named:
// the first device there is), and no more than its images.
std::size_t lane_count(std::size_t devices, std::size_t threads, std::size_t images);

// Which of the batch's `devices` devices a lane runs on, by its place in
// their list: the lanes go round them, so that lanes 0 .. devices - 1 are
// each device's first thread, and any after them its second.
inline std::size_t device_slot(std::size_t lane, std::size_t devices) {
    return devices == 0 ? 0 : lane % devices;
}

// Whether a device of `memory_bytes` takes a second GPU thread: each
// thread keeps device buffers of its own for the image it runs (its input,
// output and PNG rows: 0.75 GB for a 50-megapixel RGB image, and 1.2 GB
// more between a chain's steps), so a smaller device keeps one thread and
// all of its memory for the largest images.
constexpr std::uint64_t kSecondThreadLeastMemory = std::uint64_t{8} << 30;
inline bool takes_second_gpu_thread(std::uint64_t memory_bytes) {
    return memory_bytes >= kSecondThreadLeastMemory;
}

}  // namespace cudaconv
