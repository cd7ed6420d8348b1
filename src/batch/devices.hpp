#pragma once
// --devices all|N|LIST: the GPUs one batch filters on (docs/SPEC.md,
// docs/SCALING.md). Pure functions of the option's text, the devices CUDA
// reports and the batch's size, so that they can be tested without a GPU.
#include <cstddef>
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

}  // namespace cudaconv
