// The batch executor with stand-in stages: how many images it holds at
// once, and the threads it gives each encode.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>

#include "batch/pipeline.hpp"

namespace cudaconv {
namespace {

struct Recorder {
    std::mutex mutex;
    std::map<std::size_t, int> encode_threads;  // by image
    std::atomic<int> held{0};                   // decoded and not yet done
    std::atomic<int> most_held{0};
    std::atomic<int> done{0};
};

// Images alternate between the GPU thread and the workers; each stage
// sleeps a little, so that images overlap.
PipelineStages stages_for(Recorder& r) {
    PipelineStages s;
    s.decode = [&r](std::size_t index) {
        const int now = ++r.held;
        int most = r.most_held.load();
        while (now > most && !r.most_held.compare_exchange_weak(most, now)) {
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        auto item = std::make_unique<WorkItem>();
        item->on_gpu = index % 2 == 0;
        return item;
    };
    s.filter = [](WorkItem&) { std::this_thread::sleep_for(std::chrono::milliseconds(1)); };
    s.encode = [&r](WorkItem& item) {
        std::this_thread::sleep_for(std::chrono::milliseconds(3));
        const std::lock_guard<std::mutex> lock(r.mutex);
        r.encode_threads[item.index] = item.encode_threads;
    };
    s.done = [&r](WorkItem&) {
        --r.held;
        ++r.done;
    };
    s.failed = [](std::size_t, const std::string&) { FAIL("no stage fails"); };
    s.skipped = [](std::size_t, const std::string&) { FAIL("no stage skips"); };
    s.dropped = [](std::size_t) { FAIL("nothing is dropped"); };
    s.stop = [] { return false; };
    return s;
}

}  // namespace

TEST_CASE("the pipeline holds at most max_in_flight images", "[batch]") {
    for (const std::size_t cap : {1, 3, 8}) {
        Recorder r;
        const PipelineStages s = stages_for(r);
        run_pipeline(s, {60, 4, cap});
        INFO("max_in_flight " << cap);
        CHECK(r.done == 60);
        CHECK(r.most_held <= static_cast<int>(cap));
        CHECK(r.most_held >= static_cast<int>(std::min<std::size_t>(cap, 2)));
    }
}

TEST_CASE("encodes get one thread while images remain, the idle workers' at the end",
          "[batch]") {
    Recorder one;
    const PipelineStages s1 = stages_for(one);
    run_pipeline(s1, {1, 4, 8});
    CHECK(one.encode_threads.at(0) == 4);  // the only image: every worker's core

    Recorder many;
    const PipelineStages s2 = stages_for(many);
    run_pipeline(s2, {40, 4, 8});
    CHECK(many.encode_threads.at(0) == 1);  // 32 or more still to decode
    for (const auto& [index, threads] : many.encode_threads) {
        CHECK(threads >= 1);
        CHECK(threads <= 4);
    }
}

}  // namespace cudaconv
