// The batch executor with stand-in stages: how many images it holds at
// once, and the threads it gives each encode. The stages run on the
// pipeline's threads, where Catch2's assertions are not safe: they only
// record what they see, and the test asserts on its own thread once
// run_pipeline has returned.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "batch/pipeline.hpp"
#include "base/errors.hpp"

namespace cudaconv {
namespace {

struct EncodeSeen {
    int threads = 0;        // item.encode_threads
    int decodes_begun = 0;  // decode calls begun when the encode began
};

struct Recorder {
    // Decode of image 0 waits until image 1's has begun (at most
    // kOverlapWait): two images are then held at once, which the pipeline
    // allows whenever max_in_flight and the workers are 2 or more.
    bool overlap_first_two = false;
    std::mutex mutex;
    std::map<std::size_t, EncodeSeen> encodes;  // by image
    std::atomic<int> decodes_begun{0};
    std::atomic<int> held{0};  // decoded and not yet done
    std::atomic<int> most_held{0};
    std::atomic<int> done{0};
    std::atomic<int> failed{0};
    std::atomic<int> skipped{0};
    std::atomic<int> dropped{0};
    std::atomic<bool> overlap_timed_out{false};
};

constexpr auto kOverlapWait = std::chrono::seconds(10);

// Images alternate between the GPU thread and the workers; each stage
// sleeps a little, so that images overlap.
PipelineStages stages_for(Recorder& r) {
    PipelineStages s;
    s.decode = [&r](std::size_t index) {
        ++r.decodes_begun;
        const int now = ++r.held;
        int most = r.most_held.load();
        while (now > most && !r.most_held.compare_exchange_weak(most, now)) {
        }
        if (r.overlap_first_two && index == 0) {
            const auto deadline = std::chrono::steady_clock::now() + kOverlapWait;
            while (r.decodes_begun < 2) {
                if (std::chrono::steady_clock::now() > deadline) {
                    r.overlap_timed_out = true;
                    break;
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        auto item = std::make_unique<WorkItem>();
        item->on_gpu = index % 2 == 0;
        return item;
    };
    s.filter = [](WorkItem&) { std::this_thread::sleep_for(std::chrono::milliseconds(1)); };
    s.encode = [&r](WorkItem& item) {
        const EncodeSeen seen{item.encode_threads, r.decodes_begun.load()};
        std::this_thread::sleep_for(std::chrono::milliseconds(3));
        const std::lock_guard<std::mutex> lock(r.mutex);
        r.encodes[item.index] = seen;
    };
    s.done = [&r](WorkItem&) {
        --r.held;
        ++r.done;
    };
    s.failed = [&r](std::size_t, const std::string&) { ++r.failed; };
    s.skipped = [&r](std::size_t, const std::string&) { ++r.skipped; };
    s.dropped = [&r](std::size_t) { ++r.dropped; };
    s.stop = [] { return false; };
    return s;
}

void check_all_done(Recorder& r, int count) {
    CHECK(r.done == count);
    CHECK(r.failed == 0);   // no stage fails,
    CHECK(r.skipped == 0);  // skips
    CHECK(r.dropped == 0);  // or stops
}

}  // namespace

TEST_CASE("the pipeline holds at most max_in_flight images", "[batch]") {
    for (const std::size_t cap : {1, 3, 8}) {
        Recorder r;
        r.overlap_first_two = cap >= 2;
        const PipelineStages s = stages_for(r);
        run_pipeline(s, {60, 4, cap});
        INFO("max_in_flight " << cap);
        check_all_done(r, 60);
        CHECK_FALSE(r.overlap_timed_out);
        CHECK(r.most_held <= static_cast<int>(cap));
        // Two at once where the cap allows it (overlap_first_two sees to it).
        CHECK(r.most_held >= static_cast<int>(std::min<std::size_t>(cap, 2)));
    }
}

TEST_CASE("encodes get one thread while images remain, the idle workers' at the end", "[batch]") {
    constexpr int kWorkers = 4;
    Recorder one;
    const PipelineStages s1 = stages_for(one);
    run_pipeline(s1, {1, kWorkers, 8});
    check_all_done(one, 1);
    REQUIRE(one.encodes.count(0) == 1);
    CHECK(one.encodes.at(0).threads == kWorkers);  // the only image: every worker's core

    // An encode's threads are set under the pipeline's lock just before it
    // begins: 1 while any image is yet to be taken for decoding, and
    // otherwise the workers shared among the images in flight. That the
    // first image encodes while images remain is near-certain but up to the
    // scheduler, so it is not what is checked. The test sees decode calls
    // begin, not images taken: each worker but the encoding one may hold
    // an image taken and not yet begun, so an encode that began while
    // fewer than count - (workers - 1) decodes had begun was set while
    // images remained, and got one thread. With 2 in flight, sharing
    // would give 2 or 4: the check tells the two rules apart.
    constexpr int kCount = 40;
    for (const std::size_t cap : {2, 8}) {
        INFO("max_in_flight " << cap);
        Recorder many;
        const PipelineStages s2 = stages_for(many);
        run_pipeline(s2, {kCount, kWorkers, cap});
        check_all_done(many, kCount);
        REQUIRE(many.encodes.size() == kCount);
        for (const auto& [index, seen] : many.encodes) {
            INFO("image " << index << ": " << seen.threads << " threads, " << seen.decodes_begun
                          << " decodes begun");
            CHECK(seen.threads >= 1);
            CHECK(seen.threads <= kWorkers);
            if (seen.decodes_begun < kCount - (kWorkers - 1)) CHECK(seen.threads == 1);
        }
    }
}

// prepare_for_gpu (the batch's copy into page-locked slots) runs once on
// every image bound for the GPU thread, before that thread filters it, and
// never on the workers' images; a failure there is that image's, and the
// batch goes on.
TEST_CASE("prepare_for_gpu runs on each GPU image before its filter", "[batch]") {
    Recorder r;
    PipelineStages s = stages_for(r);
    std::mutex mutex;
    std::vector<std::size_t> prepared;  // in the order prepare_for_gpu saw them
    std::atomic<int> filtered_unprepared{0};
    std::map<const WorkItem*, bool> ready;
    s.prepare_for_gpu = [&](WorkItem& item) {
        if (item.index == 6) throw std::runtime_error("no slot");
        const std::lock_guard<std::mutex> lock(mutex);
        prepared.push_back(item.index);
        ready[&item] = true;
    };
    s.filter = [&](WorkItem& item) {
        if (item.on_gpu) {
            const std::lock_guard<std::mutex> lock(mutex);
            if (!ready[&item]) ++filtered_unprepared;
        }
    };
    constexpr int kCount = 40;
    run_pipeline(s, {kCount, 4, 6});
    CHECK(r.done == kCount - 1);
    CHECK(r.failed == 1);  // image 6
    CHECK(filtered_unprepared == 0);
    // Images 0, 2, 4, ... go to the GPU (stages_for): all but 6 prepared.
    // Decodes finish out of order, so the order is only mostly rising: each
    // is checked to be there once.
    std::vector<std::size_t> sorted = prepared;
    std::sort(sorted.begin(), sorted.end());
    std::vector<std::size_t> expected;
    for (std::size_t k = 0; k < kCount; k += 2) {
        if (k != 6) expected.push_back(k);
    }
    CHECK(sorted == expected);
}

// A decode abandoned on the user's request (Cancelled, read_image's answer
// to Ctrl-C in the middle of a PNG) is that image dropped, not failed; the
// others go on as the stop predicate says.
TEST_CASE("a stage that throws Cancelled drops its image", "[batch]") {
    Recorder r;
    PipelineStages s = stages_for(r);
    const auto decode = s.decode;
    s.decode = [&decode](std::size_t index) {
        if (index == 3) throw Cancelled("3.png: decoding stopped on request");
        return decode(index);
    };
    run_pipeline(s, {10, 2, 4});
    CHECK(r.dropped == 1);
    CHECK(r.failed == 0);
    CHECK(r.done == 9);
}

}  // namespace cudaconv

namespace cudaconv {

// gpu_group (the batch's JPEG decoding on the GPU) sees every image bound
// for the GPU thread exactly once, in order, in groups of at most
// gpu_group, each before the filter of any of its images; never the
// workers' images.
TEST_CASE("gpu_group gives the GPU thread's images in ordered groups before their filter",
          "[batch]") {
    constexpr std::size_t kCount = 80;
    constexpr std::size_t kGroup = 4;
    Recorder r;
    PipelineStages s = stages_for(r);
    std::mutex mutex;
    std::vector<std::vector<std::size_t>> groups;
    std::vector<std::size_t> filtered_before_grouped;  // an image filtered before its group came
    std::vector<bool> grouped(kCount, false);
    s.gpu_group = [&](const std::vector<WorkItem*>& items) {
        const std::lock_guard<std::mutex> lock(mutex);
        groups.emplace_back();
        for (const WorkItem* item : items) {
            groups.back().push_back(item->index);
            grouped[item->index] = true;
        }
    };
    s.filter = [&](WorkItem& item) {
        const std::lock_guard<std::mutex> lock(mutex);
        if (item.on_gpu && !grouped[item.index]) filtered_before_grouped.push_back(item.index);
    };
    run_pipeline(s, {kCount, 4, 16, kGroup});
    check_all_done(r, kCount);
    CHECK(filtered_before_grouped.empty());
    std::vector<std::size_t> seen;
    for (const auto& group : groups) {
        CHECK(!group.empty());
        CHECK(group.size() <= kGroup);
        seen.insert(seen.end(), group.begin(), group.end());
    }
    std::vector<std::size_t> expected;  // the GPU's images: the even ones (stages_for)
    for (std::size_t i = 0; i < kCount; i += 2) expected.push_back(i);
    std::vector<std::size_t> sorted = seen;
    std::sort(sorted.begin(), sorted.end());
    CHECK(sorted == expected);  // each once, none of the workers'
}

}  // namespace cudaconv
