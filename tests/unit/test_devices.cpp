// --devices: what the option's text means, and which devices a batch
// takes from those present; pure functions, no GPU needed.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "base/errors.hpp"
#include "batch/devices.hpp"
#include "kernels/runtime/device_info.hpp"

namespace cudaconv {
namespace {

std::string refusal(const std::string& text) {
    try {
        parse_devices(text);
    } catch (const UsageError& e) {
        return e.what();
    }
    return "";
}

std::string refusal(const std::string& text, const std::vector<int>& present) {
    try {
        choose_devices(parse_devices(text), present, "the CUDA driver reports no device");
    } catch (const UsageError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("devices: --devices takes all, a count or two or more device numbers", "[devices]") {
    CHECK_FALSE(DeviceRequest{}.given());  // not given: automatic
    CHECK(parse_devices("all").kind == DeviceRequest::Kind::all);
    const DeviceRequest two = parse_devices("2");
    CHECK(two.kind == DeviceRequest::Kind::count);
    CHECK(two.count == 2);
    const DeviceRequest list = parse_devices("2,0");
    CHECK(list.kind == DeviceRequest::Kind::list);
    CHECK(list.indices == std::vector<int>{2, 0});  // in the order given
}

TEST_CASE("devices: --devices refuses values that name no device, in one line", "[devices]") {
    CHECK_THAT(refusal("0"), Catch::Contains("--devices \"0\": a count of devices is at least 1"));
    for (const std::string bad : {"", "-1", "a", "ALL", "2.0", " 2", "99999", "1e3"}) {
        INFO(bad);
        CHECK_THAT(refusal(bad), Catch::Contains("--devices \"" + bad + "\": expected all"));
    }
    CHECK_THAT(refusal("0,0"), Catch::Contains("device 0 is named twice"));
    CHECK_THAT(refusal("1,,2"), Catch::Contains("\"\" is not a device number"));
    CHECK_THAT(refusal("0,"), Catch::Contains("\"\" is not a device number"));
    CHECK_THAT(refusal("0,-1"), Catch::Contains("\"-1\" is not a device number"));
    CHECK_THAT(refusal("0,x"), Catch::Contains("\"x\" is not a device number"));
    CHECK_THAT(refusal("0,1024"), Catch::Contains("\"1024\" is not a device number (0 to 1023)"));
    // kMaxDevices devices at most: a count up to it, numbers below it.
    CHECK(parse_devices("1024").count == 1024);
    CHECK_THAT(refusal("1025"), Catch::Contains("a count is at most 1024"));
    CHECK(parse_devices("0,1023").indices == std::vector<int>{0, 1023});
    for (const std::string bad : {"0", "a", "0,0"}) {
        CHECK(refusal(bad).find('\n') == std::string::npos);
    }
}

TEST_CASE("devices: --devices asks only for devices that are present", "[devices]") {
    const std::vector<int> two{0, 1};
    CHECK(choose_devices(parse_devices("all"), two, "") == two);
    CHECK(choose_devices(parse_devices("1"), two, "") == std::vector<int>{0});
    CHECK(choose_devices(parse_devices("2"), two, "") == two);
    CHECK(choose_devices(parse_devices("1,0"), two, "") == std::vector<int>{1, 0});
    CHECK_THAT(refusal("3", two),
               Catch::Contains("--devices \"3\": asks for 3 devices; CUDA devices here: 2 (0, 1)"));
    CHECK_THAT(refusal("0,2", two), Catch::Contains("no device 2; CUDA devices here: 2 (0, 1)"));
    // No device: all is none (the batch runs on the CPU), a count or list is refused.
    CHECK(choose_devices(parse_devices("all"), {}, "no CUDA driver").empty());
    CHECK_THAT(refusal("1", {}), Catch::Contains("asks for 1 device; CUDA devices here: none "
                                                 "(the CUDA driver reports no device)"));
    CHECK_THAT(refusal("0,1", {}), Catch::Contains("no device 0; CUDA devices here: none"));
}

TEST_CASE("by default a batch takes the first device", "[devices]") {
    const DeviceRequest automatic;
    CHECK(choose_devices(automatic, {}, "no CUDA driver").empty());
    CHECK(choose_devices(automatic, {0, 1, 2, 3}, "") == std::vector<int>{0});
    // A CUDA_VISIBLE_DEVICES that hides some leaves CUDA's numbers from 0.
    CHECK(choose_devices(automatic, {0}, "") == std::vector<int>{0});
}

TEST_CASE("devices: the probe's devices by number, and one found by its number", "[devices]") {
    DeviceProbe probe;
    probe.devices.resize(2);
    probe.devices[0].index = 0;
    probe.devices[1].index = 1;
    CHECK(device_numbers(probe) == std::vector<int>{0, 1});
    CHECK(find_device(probe, 1) == &probe.devices[1]);
    CHECK(find_device(probe, 2) == nullptr);
    CHECK(find_device(probe, -1) == nullptr);
    CHECK(device_numbers(DeviceProbe{}).empty());
}

TEST_CASE("devices: two GPU threads a device, but one where the GPU decodes and writes JPEG",
          "[devices]") {
    CHECK(gpu_threads_per_device(true, false, false, 200) == 2);
    CHECK(gpu_threads_per_device(true, false, true, 2) == 2);
    // The GPU decodes: two threads share its decoder for PNG outputs only.
    CHECK(gpu_threads_per_device(true, true, true, 200) == 2);
    CHECK(gpu_threads_per_device(true, true, false, 200) == 1);
    CHECK(gpu_threads_per_device(true, false, true, 1) == 1);  // one image
    CHECK(gpu_threads_per_device(true, true, true, 1) == 1);
    CHECK(gpu_threads_per_device(false, false, true, 200) == 1);  // nothing on a GPU
}

TEST_CASE("devices: lanes are threads times devices, no more than the images", "[devices]") {
    CHECK(lane_count(0, 2, 200) == 2);  // none named: the first device
    CHECK(lane_count(1, 2, 200) == 2);
    CHECK(lane_count(4, 2, 200) == 8);
    CHECK(lane_count(4, 2, 5) == 5);
    CHECK(lane_count(4, 1, 200) == 4);
    CHECK(lane_count(2, 2, 0) == 1);
    // Round the devices: each device's first thread, then its second.
    const std::vector<std::size_t> slots{device_slot(0, 2), device_slot(1, 2), device_slot(2, 2),
                                         device_slot(3, 2)};
    CHECK(slots == std::vector<std::size_t>{0, 1, 0, 1});
    CHECK(device_slot(3, 0) == 0);
    CHECK(takes_second_gpu_thread(std::uint64_t{80} << 30));
    CHECK(takes_second_gpu_thread(std::uint64_t{8} << 30));
    CHECK_FALSE(takes_second_gpu_thread((std::uint64_t{8} << 30) - 1));
}

}  // namespace cudaconv
