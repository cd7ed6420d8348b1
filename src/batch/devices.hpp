#pragma once
// --devices all|N|LIST: the GPUs one batch filters on (docs/SPEC.md,
// docs/SCALING.md). Pure functions of the option's text, the devices CUDA
// reports and the batch's size, so that they can be tested without a GPU.
#include <cstddef>
#include <string>
#include <vector>

namespace cudaconv {

// The most devices, and the highest device number, --devices names: past
// any one machine.
constexpr int kMaxDevices = 1024;

// By default a batch takes a device for every this many images it has: an
// extra device starts (its CUDA context, about 0.2-0.5 s; nvJPEG's 0.6 s
// where it decodes JPEGs) while the first one works, and pays only for the
// images it takes after; a GPU filters 100-280 12-megapixel images a second
// in a batch (docs/PERFORMANCE.md), so below about 50 images a device the
// extra one would be ready near the end, and only its start-up and memory
// would count. An estimate, checked by scripts/gpu/devices-check.sh.
constexpr std::size_t kImagesPerDevice = 50;

struct DeviceRequest {
    enum class Kind {
        automatic,  // not given: every device where the batch is large enough
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
// UsageError naming those there are; all of them under `all`; under
// automatic, one a kImagesPerDevice images, at least the first, at most
// all. Empty where none is present (the batch then runs on the CPU).
std::vector<int> choose_devices(const DeviceRequest& request, const std::vector<int>& present,
                                const std::string& problem, std::size_t images);

}  // namespace cudaconv
