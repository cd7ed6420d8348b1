#include "batch/devices.hpp"

#include <algorithm>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/errors.hpp"
#include "base/printable.hpp"

namespace cudaconv {
namespace {

// A whole number of decimal digits, at most kMaxDevices (a count; a device
// number is checked to be below it); -1 otherwise.
int parse_number(std::string_view digits) {
    if (digits.empty() || digits.size() > 4) return -1;
    int value = 0;
    for (const char c : digits) {
        if (c < '0' || c > '9') return -1;
        value = value * 10 + (c - '0');
    }
    return value <= kMaxDevices ? value : -1;
}

std::string present_text(const std::vector<int>& present) {
    if (present.empty()) return "none";
    return fmt::format("{} ({})", present.size(), fmt::join(present, ", "));
}

}  // namespace

DeviceRequest parse_devices(const std::string& text) {
    DeviceRequest request;
    request.text = text;
    const auto fail = [&](const std::string& why) {
        return UsageError(fmt::format("--devices \"{}\": {}", printable(text), why));
    };
    if (text == "all") {
        request.kind = DeviceRequest::Kind::all;
        return request;
    }
    if (text.find(',') == std::string::npos) {
        const int count = parse_number(text);
        if (count < 0) {
            throw fail(fmt::format("expected all, a count of devices (2), or two or more "
                                   "device numbers (0,2); a count is at most {}",
                                   kMaxDevices));
        }
        if (count == 0) {
            throw fail("a count of devices is at least 1 (one device by its number: "
                       "CUDA_VISIBLE_DEVICES=N; no GPU: -k cpu)");
        }
        request.kind = DeviceRequest::Kind::count;
        request.count = count;
        return request;
    }
    std::string_view rest = text;
    for (;;) {
        const std::size_t comma = rest.find(',');
        const std::string_view item = rest.substr(0, comma);
        const int index = parse_number(item);
        if (index < 0 || index >= kMaxDevices) {
            throw fail(fmt::format("\"{}\" is not a device number (0 to {})", printable(item),
                                   kMaxDevices - 1));
        }
        if (std::find(request.indices.begin(), request.indices.end(), index) !=
            request.indices.end()) {
            throw fail(fmt::format("device {} is named twice", index));
        }
        request.indices.push_back(index);
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
    }
    request.kind = DeviceRequest::Kind::list;
    return request;
}

std::vector<int> choose_devices(const DeviceRequest& request, const std::vector<int>& present,
                                const std::string& problem) {
    const auto fail = [&](const std::string& why) {
        std::string there = present_text(present);
        if (present.empty() && !problem.empty()) there += " (" + problem + ")";
        return UsageError(fmt::format("--devices \"{}\": {}; CUDA devices here: {}",
                                      printable(request.text), why, there));
    };
    switch (request.kind) {
        case DeviceRequest::Kind::automatic:
            if (present.empty()) return {};
            return {present.front()};
        case DeviceRequest::Kind::all: return present;
        case DeviceRequest::Kind::count:
            if (static_cast<std::size_t>(request.count) > present.size()) {
                throw fail(fmt::format("asks for {} device{}", request.count,
                                       request.count == 1 ? "" : "s"));
            }
            return {present.begin(), present.begin() + request.count};
        case DeviceRequest::Kind::list:
            for (const int index : request.indices) {
                if (std::find(present.begin(), present.end(), index) == present.end()) {
                    throw fail(fmt::format("no device {}", index));
                }
            }
            return request.indices;
    }
    return {};
}

std::size_t gpu_threads_per_device(bool runs_on_gpu, bool gpu_decode, bool png_outputs,
                                   std::size_t images) {
    return runs_on_gpu && (!gpu_decode || png_outputs) && images > 1 ? kGpuThreadsPerDevice : 1;
}

std::size_t lane_count(std::size_t devices, std::size_t threads, std::size_t images) {
    const std::size_t lanes = std::max<std::size_t>(1, devices) * std::max<std::size_t>(1, threads);
    return std::max<std::size_t>(1, std::min(lanes, images));
}

}  // namespace cudaconv
