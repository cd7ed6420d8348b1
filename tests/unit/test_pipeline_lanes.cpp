// The batch executor with several GPU lanes (--devices), with stand-in
// stages and fake devices: each lane's filter sleeps as long as its
// "device" takes. The stages run on the pipeline's threads, where Catch2's
// assertions are not safe: they record what they see, and the test asserts
// once run_pipeline has returned.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/errors.hpp"
#include "batch/pipeline.hpp"

namespace cudaconv {
namespace {

using Clock = std::chrono::steady_clock;

// What the stages saw, by image and by lane.
struct LaneRecorder {
    explicit LaneRecorder(std::size_t count) : filtered_by(count, -1), reports(count, 0) {}

    std::mutex mutex;
    std::vector<int> filtered_by;  // the lane that filtered each image (-1: none)
    std::vector<int> reports;      // done, failed, skipped and dropped calls, by image
    std::vector<std::string> errors;
    std::map<std::size_t, std::set<std::thread::id>> filter_threads;  // by lane
    std::map<std::size_t, std::set<std::thread::id>> enter_threads;   // by lane
    std::map<std::size_t, int> entered;                               // enter_lane calls, by lane
    std::map<std::size_t, std::set<std::thread::id>> bind_threads;    // by lane
    std::map<std::size_t, int> bound;                                 // bind_lane calls, by lane
    std::vector<std::size_t> filter_order;                            // lanes, as filters began
    int lane_mismatch = 0;  // an image prepared or grouped on one lane, filtered on another
    int filtered_before_entered = 0;  // a lane's image filtered before its enter_lane
    std::map<const WorkItem*, std::size_t> prepared_on;
    std::map<std::size_t, int> pending;       // taken by a lane's group stage, not yet filtered
    std::map<std::size_t, int> most_pending;  // by lane
    std::atomic<int> held{0};
    std::atomic<int> most_held{0};
    std::atomic<int> done{0};
    std::atomic<int> failed{0};
    std::atomic<int> dropped{0};
    std::atomic<int> decoded{0};
};

// Every image goes to the GPU; lane `l` filters in `filter_ms[l]`.
PipelineStages lane_stages(LaneRecorder& r, const std::vector<int>& filter_ms) {
    PipelineStages s;
    s.decode = [&r](std::size_t) {
        ++r.decoded;
        const int now = ++r.held;
        int most = r.most_held.load();
        while (now > most && !r.most_held.compare_exchange_weak(most, now)) {
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        auto item = std::make_unique<WorkItem>();
        item->on_gpu = true;
        return item;
    };
    s.enter_lane = [&r](std::size_t lane) {
        const std::lock_guard<std::mutex> lock(r.mutex);
        ++r.entered[lane];
        r.enter_threads[lane].insert(std::this_thread::get_id());
        return true;
    };
    s.bind_lane = [&r](std::size_t lane) {
        const std::lock_guard<std::mutex> lock(r.mutex);
        ++r.bound[lane];
        r.bind_threads[lane].insert(std::this_thread::get_id());
    };
    s.filter = [&r, filter_ms](WorkItem& item) {
        {
            const std::lock_guard<std::mutex> lock(r.mutex);
            r.filtered_by[item.index] = static_cast<int>(item.lane);
            r.filter_threads[item.lane].insert(std::this_thread::get_id());
            r.filter_order.push_back(item.lane);
            if (r.enter_threads[item.lane].count(std::this_thread::get_id()) == 0) {
                ++r.filtered_before_entered;
            }
            const auto prepared = r.prepared_on.find(&item);
            if (prepared != r.prepared_on.end() && prepared->second != item.lane) {
                ++r.lane_mismatch;
            }
            if (prepared != r.prepared_on.end()) --r.pending[item.lane];
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(filter_ms.at(item.lane)));
    };
    s.encode = [](WorkItem&) {};
    const auto report = [&r](std::size_t index) {
        const std::lock_guard<std::mutex> lock(r.mutex);
        ++r.reports.at(index);
    };
    s.done = [&r, report](WorkItem& item) {
        --r.held;
        ++r.done;
        report(item.index);
    };
    s.failed = [&r, report](std::size_t index, const std::string& error) {
        --r.held;
        ++r.failed;
        report(index);
        const std::lock_guard<std::mutex> lock(r.mutex);
        r.errors.push_back(error);
    };
    s.skipped = [report](std::size_t index, const std::string&) { report(index); };
    s.dropped = [&r, report](std::size_t index) {
        --r.held;
        ++r.dropped;
        report(index);
    };
    s.stop = [] { return false; };
    return s;
}

// prepare_for_gpu and gpu_group that note the lane each image had there.
void add_prepare_and_group(PipelineStages& s, LaneRecorder& r) {
    s.prepare_for_gpu = [&r](WorkItem& item) {
        const std::lock_guard<std::mutex> lock(r.mutex);
        r.prepared_on[&item] = item.lane;
    };
    s.gpu_group = [&r](const std::vector<WorkItem*>& items) {
        const std::lock_guard<std::mutex> lock(r.mutex);
        for (const WorkItem* item : items) {
            if (item->lane != items.front()->lane) ++r.lane_mismatch;
        }
        const std::size_t lane = items.front()->lane;
        r.pending[lane] += static_cast<int>(items.size());
        r.most_pending[lane] = std::max(r.most_pending[lane], r.pending[lane]);
    };
}

std::map<int, int> images_by_lane(const LaneRecorder& r) {
    std::map<int, int> counts;
    for (const int lane : r.filtered_by) ++counts[lane];
    return counts;
}

}  // namespace

TEST_CASE("several lanes filter every image exactly once, each lane on its own threads",
          "[batch]") {
    constexpr std::size_t kCount = 120;
    for (const std::size_t lanes : {1, 2, 3}) {
        for (const bool prepares : {false, true}) {
            INFO("lanes " << lanes << ", thread before the GPU threads " << prepares);
            LaneRecorder r(kCount);
            PipelineStages s = lane_stages(r, std::vector<int>(lanes, 1));
            if (prepares) add_prepare_and_group(s, r);
            PipelineOptions options{kCount, 4, 16, 4};
            options.lanes = lanes;
            run_pipeline(s, options);
            CHECK(r.done == static_cast<int>(kCount));
            CHECK(r.failed == 0);
            CHECK(r.dropped == 0);
            CHECK(std::count(r.reports.begin(), r.reports.end(), 1) ==
                  static_cast<std::ptrdiff_t>(kCount));
            CHECK(std::count(r.filtered_by.begin(), r.filtered_by.end(), -1) == 0);
            for (const int lane : r.filtered_by) CHECK(lane < static_cast<int>(lanes));
            CHECK(r.lane_mismatch == 0);
            CHECK(r.filtered_before_entered == 0);
            std::set<std::thread::id> gpu_threads;
            for (std::size_t lane = 0; lane < lanes; ++lane) {
                // One GPU thread a lane, entered once; the thread before it
                // only bound, on a thread of its own.
                if (!r.filter_threads[lane].empty()) {
                    REQUIRE(r.filter_threads[lane].size() == 1);
                    CHECK(*r.filter_threads[lane].begin() == *r.enter_threads[lane].begin());
                    CHECK(gpu_threads.insert(*r.filter_threads[lane].begin()).second);
                }
                CHECK(r.entered[lane] == 1);
                CHECK(r.enter_threads[lane].size() == 1);
                CHECK(r.bound[lane] == (prepares ? 1 : 0));
                if (prepares) {
                    REQUIRE(r.bind_threads[lane].size() == 1);
                    CHECK(*r.bind_threads[lane].begin() != *r.enter_threads[lane].begin());
                }
            }
            CHECK(r.most_held <= 16);
        }
    }
}

TEST_CASE("a slower lane takes fewer images, and a lane still starting takes none", "[batch]") {
    constexpr std::size_t kCount = 100;
    for (const bool prepares : {false, true}) {
        INFO("thread before the GPU threads " << prepares);
        // Lane 1 is 20 times slower than lane 0.
        LaneRecorder r(kCount);
        PipelineStages s = lane_stages(r, {2, 40});
        if (prepares) add_prepare_and_group(s, r);
        PipelineOptions options{kCount, 4, 16, 4};
        options.lanes = 2;
        run_pipeline(s, options);
        CHECK(r.done == static_cast<int>(kCount));
        const std::map<int, int> counts = images_by_lane(r);
        INFO("lane 0 " << counts.at(0) << ", lane 1 " << counts.at(1));
        CHECK(counts.at(1) >= 1);
        CHECK(counts.at(0) > 4 * counts.at(1));
        // Taken ahead by the slow lane, at most: a group (4), taken while one
        // image waits for its GPU thread and the GPU thread holds another
        // (else it would fill the 16 in flight).
        if (prepares) CHECK(r.most_pending[1] <= 4 + 2);

        // Lane 1 enters only once lane 0 has filtered 20 images (a device whose
        // start-up is slow): the first 20 filters are all lane 0's.
        LaneRecorder late(kCount);
        PipelineStages s2 = lane_stages(late, {1, 1});
        if (prepares) add_prepare_and_group(s2, late);
        const auto enter = s2.enter_lane;
        s2.enter_lane = [&late, enter](std::size_t lane) {
            if (lane == 1) {
                const auto deadline = Clock::now() + std::chrono::seconds(20);
                for (;;) {
                    {
                        const std::lock_guard<std::mutex> lock(late.mutex);
                        if (late.filter_order.size() >= 20) break;
                    }
                    if (Clock::now() > deadline) break;
                    std::this_thread::sleep_for(std::chrono::milliseconds(1));
                }
            }
            return enter(lane);
        };
        run_pipeline(s2, options);
        CHECK(late.done == static_cast<int>(kCount));
        REQUIRE(late.filter_order.size() == kCount);
        CHECK(std::count(late.filter_order.begin(), late.filter_order.begin() + 20, 0) == 20);
        CHECK(images_by_lane(late).count(1) == 1);  // it did take some after
    }
}

TEST_CASE("a lane whose device cannot start takes no image, lane 0 always runs", "[batch]") {
    constexpr std::size_t kCount = 60;
    for (const bool prepares : {false, true}) {
        INFO("thread before the GPU threads " << prepares);
        LaneRecorder r(kCount);
        PipelineStages s = lane_stages(r, {1, 1, 1});
        if (prepares) add_prepare_and_group(s, r);
        const auto enter = s.enter_lane;
        s.enter_lane = [enter](std::size_t lane) { return enter(lane) && lane != 1; };
        PipelineOptions options{kCount, 4, 12, 4};
        options.lanes = 3;
        run_pipeline(s, options);
        CHECK(r.done == static_cast<int>(kCount));
        const std::map<int, int> counts = images_by_lane(r);
        CHECK(counts.count(1) == 0);
        CHECK(counts.count(0) == 1);
        CHECK(counts.count(2) == 1);
        CHECK(r.entered[1] == 1);  // its GPU thread asked
        CHECK(r.bound[1] == 0);    // the thread before it was never bound

        // Lane 0 declines and lane 1 starts: lane 1 takes every image, and
        // lane 0 is said to be left out, as any other lane would be.
        LaneRecorder first(kCount);
        PipelineStages s1 = lane_stages(first, {1, 1});
        if (prepares) add_prepare_and_group(s1, first);
        const auto enter1 = s1.enter_lane;
        s1.enter_lane = [enter1](std::size_t lane) { return enter1(lane) && lane != 0; };
        std::vector<std::pair<std::size_t, std::string>> left;
        s1.left_lane = [&first, &left](std::size_t lane, const std::string& lost) {
            const std::lock_guard<std::mutex> lock(first.mutex);
            left.emplace_back(lane, lost);
        };
        options.lanes = 2;
        run_pipeline(s1, options);
        CHECK(first.done == static_cast<int>(kCount));
        CHECK(images_by_lane(first) == std::map<int, int>{{1, static_cast<int>(kCount)}});
        REQUIRE(left.size() == 1);
        CHECK(left.front() == std::pair<std::size_t, std::string>{0, ""});

        // Every lane declines: lane 0 runs all the same.
        LaneRecorder all(kCount);
        PipelineStages s2 = lane_stages(all, {1, 1});
        if (prepares) add_prepare_and_group(s2, all);
        const auto enter2 = s2.enter_lane;
        s2.enter_lane = [enter2](std::size_t lane) { return enter2(lane) && false; };
        options.lanes = 2;
        run_pipeline(s2, options);
        CHECK(all.done == static_cast<int>(kCount));
        CHECK(images_by_lane(all) == std::map<int, int>{{0, static_cast<int>(kCount)}});
    }
}

TEST_CASE("with several lanes a failing image fails alone and a stop drops the rest", "[batch]") {
    constexpr std::size_t kCount = 60;
    for (const bool prepares : {false, true}) {
        INFO("thread before the GPU threads " << prepares);
        LaneRecorder r(kCount);
        PipelineStages s = lane_stages(r, {1, 2});
        if (prepares) add_prepare_and_group(s, r);
        const auto filter = s.filter;
        s.filter = [filter](WorkItem& item) {
            filter(item);
            if (item.index == 7 || item.index == 8) throw std::runtime_error("bad image");
        };
        PipelineOptions options{kCount, 3, 8, 4};
        options.lanes = 2;
        run_pipeline(s, options);
        CHECK(r.done == static_cast<int>(kCount) - 2);
        CHECK(r.failed == 2);
        CHECK(std::count(r.reports.begin(), r.reports.end(), 1) ==
              static_cast<std::ptrdiff_t>(kCount));

        // Ctrl-C after 10 images: every image taken is reported once (done or
        // dropped), none twice, and run_pipeline returns.
        LaneRecorder stopped(kCount);
        PipelineStages s2 = lane_stages(stopped, {1, 3});
        if (prepares) add_prepare_and_group(s2, stopped);
        s2.stop = [&stopped] { return stopped.done >= 10; };
        run_pipeline(s2, options);
        CHECK(stopped.done >= 10);
        CHECK(stopped.done < static_cast<int>(kCount));
        CHECK(std::count_if(stopped.reports.begin(), stopped.reports.end(),
                            [](int n) { return n > 1; }) == 0);
        CHECK(stopped.done + stopped.failed + stopped.dropped == stopped.decoded);
        CHECK(stopped.held == 0);

        // A UsageError on lane 1 (a variant named with -k that cannot run an
        // image) stops the batch and comes back from run_pipeline.
        LaneRecorder usage(kCount);
        PipelineStages s3 = lane_stages(usage, {1, 1});
        if (prepares) add_prepare_and_group(s3, usage);
        const auto filter3 = s3.filter;
        s3.filter = [filter3](WorkItem& item) {
            filter3(item);
            if (item.lane == 1) throw UsageError("-k x cannot run this image");
        };
        CHECK_THROWS_AS(run_pipeline(s3, options), UsageError);
        CHECK(usage.held == 0);
    }
}

TEST_CASE("a lane whose device is lost gives its images to the others", "[batch]") {
    constexpr std::size_t kCount = 80;
    for (const bool prepares : {false, true}) {
        INFO("thread before the GPU threads " << prepares);
        // Lane 1 loses its device at its first image (a sticky CUDA error):
        // lanes 0 and 2 finish every image, none fails, each is reported once.
        LaneRecorder r(kCount);
        PipelineStages s = lane_stages(r, {2, 1, 2});
        if (prepares) add_prepare_and_group(s, r);
        const auto filter = s.filter;
        s.filter = [filter](WorkItem& item) {
            filter(item);
            if (item.lane == 1) throw DeviceLost("illegal address");
        };
        std::vector<std::pair<std::size_t, std::string>> left;
        s.left_lane = [&r, &left](std::size_t lane, const std::string& lost) {
            const std::lock_guard<std::mutex> lock(r.mutex);
            left.emplace_back(lane, lost);
        };
        PipelineOptions options{kCount, 4, 16, 4};
        options.lanes = 3;
        run_pipeline(s, options);
        CHECK(r.done == static_cast<int>(kCount));
        CHECK(r.failed == 0);
        CHECK(std::count(r.reports.begin(), r.reports.end(), 1) ==
              static_cast<std::ptrdiff_t>(kCount));
        CHECK(std::count(r.filter_order.begin(), r.filter_order.end(), 1) == 1);
        CHECK(images_by_lane(r).count(1) == 0);  // each image last filtered elsewhere
        CHECK(r.held == 0);
        REQUIRE(left.size() == 1);
        CHECK(left.front() == std::pair<std::size_t, std::string>{1, "illegal address"});

        // Lane 1 loses its device while lanes 0 and 2 are still starting:
        // it waits for them to start and gives its image to them, rather
        // than failing it as the last lane.
        LaneRecorder early(kCount);
        PipelineStages s1 = lane_stages(early, {1, 1, 1});
        if (prepares) add_prepare_and_group(s1, early);
        const auto enter1 = s1.enter_lane;
        std::atomic<bool> lane1_lost{false};
        s1.enter_lane = [enter1, &lane1_lost](std::size_t lane) {
            const auto deadline = Clock::now() + std::chrono::seconds(20);
            while (lane != 1 && !lane1_lost && Clock::now() < deadline) {
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
            return enter1(lane);
        };
        const auto filter1 = s1.filter;
        s1.filter = [filter1, &lane1_lost](WorkItem& item) {
            filter1(item);
            if (item.lane == 1) {
                lane1_lost = true;
                throw DeviceLost("illegal address");
            }
        };
        run_pipeline(s1, options);
        CHECK(lane1_lost);
        CHECK(early.done == static_cast<int>(kCount));
        CHECK(early.failed == 0);
        CHECK(images_by_lane(early).count(1) == 0);

        // Every lane's device is lost: one lane is retired, the last one
        // fails the images, as a single device would.
        LaneRecorder all(kCount);
        PipelineStages s2 = lane_stages(all, {1, 1});
        if (prepares) add_prepare_and_group(s2, all);
        const auto filter2 = s2.filter;
        s2.filter = [filter2](WorkItem& item) {
            filter2(item);
            throw DeviceLost("illegal address");
        };
        int left2 = 0;
        s2.left_lane = [&all, &left2](std::size_t, const std::string&) {
            const std::lock_guard<std::mutex> lock(all.mutex);
            ++left2;
        };
        options.lanes = 2;
        run_pipeline(s2, options);
        CHECK(all.done == 0);
        CHECK(all.failed == static_cast<int>(kCount));
        CHECK(std::count(all.reports.begin(), all.reports.end(), 1) ==
              static_cast<std::ptrdiff_t>(kCount));
        CHECK(left2 == 1);
        CHECK(all.held == 0);
    }
}

TEST_CASE("several lanes hold at most max_in_flight images", "[batch]") {
    constexpr std::size_t kCount = 80;
    for (const std::size_t cap : {2, 5, 12}) {
        for (const bool prepares : {false, true}) {
            INFO("max_in_flight " << cap << ", thread before the GPU threads " << prepares);
            LaneRecorder r(kCount);
            PipelineStages s = lane_stages(r, {1, 2, 3});
            if (prepares) add_prepare_and_group(s, r);
            PipelineOptions options{kCount, 4, cap, 4};
            options.lanes = 3;
            run_pipeline(s, options);
            CHECK(r.done == static_cast<int>(kCount));
            CHECK(r.most_held <= static_cast<int>(cap));
        }
    }
}

TEST_CASE("a lane left out gives back the images held for it", "[batch]") {
    // Lanes 0 and 1 filter slower than the one worker decodes, so the
    // images in flight stay at the limit. Lane 2 is left out: its start
    // fails, or its device is lost at its first image. From then on at most
    // max_in_flight - in_flight_per_lane images are held. The first image
    // decoded after it may have been let in before (one worker: at most
    // one), so it is not counted.
    constexpr std::size_t kCount = 60;
    constexpr std::size_t kPerLane = 4;
    constexpr std::size_t kCap = 2 + 2 * kPerLane;
    for (const bool lost : {false, true}) {
        INFO((lost ? "lane 2's device lost" : "lane 2 cannot start"));
        LaneRecorder r(kCount);
        PipelineStages s = lane_stages(r, {8, 8, 8});
        std::atomic<bool> left_out{false};
        std::atomic<int> decoded_after{0};
        std::atomic<int> most_held_after{0};
        const auto decode = s.decode;
        s.decode = [&, decode](std::size_t index) {
            auto item = decode(index);
            if (left_out && ++decoded_after > 1) {
                most_held_after = std::max(most_held_after.load(), r.held.load());
            }
            return item;
        };
        const auto enter = s.enter_lane;
        s.enter_lane = [enter, lost](std::size_t lane) {
            return enter(lane) && (lost || lane != 2);
        };
        const auto filter = s.filter;
        s.filter = [filter](WorkItem& item) {
            filter(item);
            if (item.lane == 2) throw DeviceLost("illegal address");
        };
        s.left_lane = [&left_out](std::size_t, const std::string&) { left_out = true; };
        PipelineOptions options{kCount, 1, kCap, 4};
        options.lanes = 3;
        options.in_flight_per_lane = kPerLane;
        run_pipeline(s, options);
        CHECK(r.done == static_cast<int>(kCount));
        CHECK(left_out);
        CHECK(decoded_after > 10);
        CHECK(most_held_after == static_cast<int>(kCap - kPerLane));
    }
}

}  // namespace cudaconv
