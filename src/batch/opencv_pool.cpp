#include "batch/opencv_pool.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <set>
#include <string>
#include <system_error>
#include <thread>

#include <opencv2/core/utility.hpp>
#include <spdlog/spdlog.h>

#include "batch/thread_group.hpp"

namespace cudaconv {
namespace {

// The pool's threads arrive within a millisecond or so; one that comes later
// is still made, as it would have been without this wait, just not first.
constexpr auto kArrivalWait = std::chrono::milliseconds(50);
// Ranges a thread of the pool may take in the loop that waits for them all:
// more than one each, however the pool splits the loop.
constexpr int kRangesPerThread = 4;
// The threads a batch cannot run without (its GPU thread, the thread that
// prepares images for the GPU, one worker): where the system gives fewer
// threads than the pool wants, these are left to the batch first.
constexpr int kBatchThreads = 3;

// How many of `wanted` threads the system gives at once (each waits until
// all have been counted); `failure` says why it gave no more.
int threads_available(int wanted, std::error_code& failure) {
    std::mutex mutex;
    std::condition_variable released;
    bool counted = false;
    ThreadGroup threads;
    const auto wait = [&] {
        std::unique_lock<std::mutex> lock(mutex);
        released.wait(lock, [&] { return counted; });
    };
    while (static_cast<int>(threads.size()) < wanted && threads.start(wait)) {
    }
    const int available = static_cast<int>(threads.size());
    failure = threads.failure();
    {
        const std::lock_guard<std::mutex> lock(mutex);
        counted = true;
    }
    released.notify_all();
    threads.join();
    return available;
}

// One parallel loop whose every range waits until `threads` threads (the
// caller and the pool's) have come, or kArrivalWait has passed.
void wait_for_pool(int threads) {
    std::mutex mutex;
    std::condition_variable arrived;
    std::set<std::thread::id> seen;
    const auto deadline = std::chrono::steady_clock::now() + kArrivalWait;
    const int ranges = threads * kRangesPerThread;
    cv::parallel_for_(
        cv::Range(0, ranges),
        [&](const cv::Range&) {
            std::unique_lock<std::mutex> lock(mutex);
            seen.insert(std::this_thread::get_id());
            arrived.notify_all();
            arrived.wait_until(lock, deadline,
                               [&] { return static_cast<int>(seen.size()) >= threads; });
        },
        ranges);
}

void shrink_pool(int threads, int wanted, const std::string& why) {
    cv::setNumThreads(threads);
    spdlog::warn("OpenCV's pool runs on {} of {} threads: cannot start more threads: {}", threads,
                 wanted, why);
}

}  // namespace

void start_opencv_pool() {
    const int wanted = cv::getNumThreads();  // the calling thread's place included
    if (wanted <= 1) return;
    std::error_code failure;
    const int available = threads_available(wanted - 1 + kBatchThreads, failure);
    // Short of threads: the batch's own first, then half of the rest for the
    // pool and half for the batch's other workers.
    const int extra = available < wanted - 1 + kBatchThreads
                          ? std::max(0, available - kBatchThreads) / 2
                          : wanted - 1;
    if (extra < wanted - 1) shrink_pool(extra + 1, wanted, failure.message());
    if (extra == 0) return;
    try {
        wait_for_pool(extra + 1);
    } catch (const std::exception& e) {
        // The system gave the threads a moment ago, and not now.
        shrink_pool(1, wanted, e.what());
    }
}

}  // namespace cudaconv
