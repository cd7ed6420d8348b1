#pragma once
// What the CPU variants share around their own loops: the dispatch from the
// job's depths to a typed function, and timing repeats with a steady clock.
#include <chrono>
#include <stdexcept>
#include <cstdint>

#include "core/backend.hpp"

namespace cudaconv {

// Calls f(In{}, Out{}) with In and Out the job's input and output sample types.
template <typename F>
void dispatch_depths(const Job& job, F&& f) {
    auto with_output = [&](auto in) {
        switch (job.dst.depth) {
            case Depth::u8: return f(in, std::uint8_t{});
            case Depth::u16: return f(in, std::uint16_t{});
            case Depth::f32: return f(in, float{});
        }
    };
    switch (job.src.depth) {
        case Depth::u8: return with_output(std::uint8_t{});
        case Depth::u16: return with_output(std::uint16_t{});
        case Depth::f32: return with_output(float{});
    }
}

// Runs filter() options.warmup + options.repeat times (fewer where
// options.stop_repeating says so); the repeats are timed.
template <typename F>
RunTimings time_cpu_runs(const RunOptions& options, F&& filter) {
    if (options.device_src) {
        throw std::invalid_argument("a CPU variant cannot read an input held on the device");
    }
    RunTimings timings;
    const int runs = options.warmup + options.repeat;
    for (int i = 0; i < runs; ++i) {
        if (i > 0 && options.stop_repeating && options.stop_repeating()) {
            if (!timings.filter_ms.empty()) break;
            i = runs - 1;  // still in the warm-up: one timed run, then stop
        }
        const auto start = std::chrono::steady_clock::now();
        filter();
        const std::chrono::duration<double, std::milli> elapsed =
            std::chrono::steady_clock::now() - start;
        if (i >= options.warmup) timings.filter_ms.push_back(elapsed.count());
    }
    return timings;
}

}  // namespace cudaconv
