#include "batch/pipeline.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "batch/thread_group.hpp"
#include "base/errors.hpp"

namespace cudaconv {
namespace {

// How often a waiting thread looks at the stop flag: a signal handler
// cannot notify a condition variable, so waits time out instead.
constexpr auto kStopPoll = std::chrono::milliseconds(50);
// Images queued for the thread after a group stage that let it wait to
// make the group larger.
constexpr std::size_t kAheadOfNext = 2;

class Pipeline {
public:
    Pipeline(const PipelineStages& stages, const PipelineOptions& options)
        : stages_(stages), options_(options) {}

    void run() {
        // Each worker waits to hear how many of them run; the others end at once.
        std::promise<int> kept;
        const std::shared_future<int> running = kept.get_future().share();
        ThreadGroup threads;  // joined on every way out: the threads end once stopping()
        // No image is taken until every thread has started (each waits for
        // the lock first), so a warning about them comes before any image.
        std::unique_lock<std::mutex> starting(mutex_);
        // Each lane's GPU thread and the one before it first: without them
        // no image bound for the GPU would get done, so the batch cannot run.
        for (std::size_t lane = 0; lane < lanes_.size(); ++lane) {
            const std::string which = lanes_.size() > 1 ? fmt::format(" (device lane {})", lane)
                                                        : std::string();
            if (!threads.start([this, lane] { gpu_thread(lane); })) {
                cannot_start(threads, starting, "the batch's GPU thread" + which);
            }
            if (prepares() && !threads.start([this, lane] { prepare_thread(lane); })) {
                cannot_start(threads, starting,
                             "the thread that prepares images for the GPU" + which);
            }
        }
        // Workers: as many as asked where the system gives them, else half
        // of those it gave (let_go_half), at least one.
        const std::size_t first_worker = threads.size();
        int started = 0;
        while (started < options_.workers && threads.start([this, running, number = started] {
            if (number < running.get()) worker_loop();
        })) {
            ++started;
        }
        if (started == 0) cannot_start(threads, starting, "the batch's first worker");
        workers_ = started < options_.workers ? let_go_half(started) : started;
        kept.set_value(workers_);
        if (workers_ < options_.workers) {
            spdlog::warn("running {} of the {} workers asked for (-j): the system would start "
                         "only {} ({}){}",
                         workers_, options_.workers, started, threads.failure().message(),
                         workers_ < started ? ", and half of them were let go to leave room for "
                                              "the images"
                                            : "");
        }
        // The workers let go end, their stacks unmapped, before any image is decoded.
        threads.join_after(first_worker + static_cast<std::size_t>(workers_));
        starting.unlock();
        threads.join();
        if (fatal_) std::rethrow_exception(fatal_);
    }

private:
    // No image has been taken yet: the threads started end once `starting`
    // lets them look.
    [[noreturn]] void cannot_start(ThreadGroup& threads, std::unique_lock<std::mutex>& starting,
                                   const std::string& which) {
        fatal_stop_ = true;
        starting.unlock();
        threads.join();
        throw WorkError(
            fmt::format("cannot start a thread: {} ({})", threads.failure().message(), which));
    }

    // The system would not start all the workers asked for: it has run out
    // of something the images need as well (address space, of which each
    // worker's stack takes ulimit -s, 8 MB by default; or its limit on
    // threads, which CUDA's own count against). Half of the workers started
    // go again, giving back their share, and as many fewer images may be in
    // flight. Returns the workers that run. Under mutex_.
    int let_go_half(int started) {
        const int running = std::max(1, started / 2);
        const auto asked = static_cast<std::size_t>(options_.workers);
        const std::size_t beyond_workers =
            options_.max_in_flight - std::min(options_.max_in_flight, asked);
        max_in_flight_ =
            std::min(max_in_flight_, static_cast<std::size_t>(running) + beyond_workers);
        return running;
    }

    // A lane left out: the images in flight held for it go (never the
    // last one). Under mutex_.
    void give_back_share_in_flight() {
        max_in_flight_ -= std::min(options_.in_flight_per_lane, max_in_flight_ - 1);
    }

    bool stopping() const { return fatal_stop_ || stages_.stop(); }

    // Whether images bound for the GPU thread pass through a thread before it.
    bool prepares() const { return stages_.prepare_for_gpu || stages_.gpu_group; }

    // Under mutex_.
    bool can_decode() const {
        return !stopping() && next_ < options_.count && in_flight_ < max_in_flight_;
    }
    bool all_done() const { return (stopping() || next_ >= options_.count) && in_flight_ == 0; }

    int encode_threads() {
        const std::lock_guard<std::mutex> lock(mutex_);
        if (next_ < options_.count || in_flight_ == 0) return 1;
        return std::max(1, workers_ / static_cast<int>(in_flight_));
    }

    void worker_loop() {
        for (;;) {
            std::unique_ptr<WorkItem> item;
            std::size_t index = 0;
            {
                std::unique_lock<std::mutex> lock(mutex_);
                while (encode_queue_.empty() && !can_decode() && !all_done()) {
                    changed_.wait_for(lock, kStopPoll);
                }
                if (!encode_queue_.empty()) {
                    item = std::move(encode_queue_.front());
                    encode_queue_.pop_front();
                } else if (can_decode()) {
                    index = next_++;
                    ++in_flight_;
                } else {
                    return;  // all_done()
                }
            }
            if (item) {
                finish(std::move(item));
            } else {
                start(index);
            }
        }
    }

    // Decode, then filter here (CPU) and encode, or hand over to the GPU.
    void start(std::size_t index) {
        std::unique_ptr<WorkItem> item;
        if (!attempt(index, [&] { item = stages_.decode(index); })) return release();
        item->index = index;  // failed() and dropped() are called with this number
        if (item->on_gpu) {
            {
                const std::lock_guard<std::mutex> lock(mutex_);
                (prepares() ? prepare_queue_ : gpu_queue_).push_back(std::move(item));
            }
            changed_.notify_all();
            return;
        }
        if (stopping()) return drop(index);
        if (!attempt(index, [&] { stages_.filter(*item); })) return release();
        finish(std::move(item));
    }

    void finish(std::unique_ptr<WorkItem> item) {
        const std::size_t index = item->index;
        if (stopping()) return drop(index);
        item->encode_threads = encode_threads();
        if (attempt(index, [&] { stages_.encode(*item); })) stages_.done(*item);
        item.reset();  // free the images before another decode may start
        release();
    }

    using Queue = std::deque<std::unique_ptr<WorkItem>>;

    using GroupStage = std::function<void(const std::vector<WorkItem*>&)>;

    // One device's threads: its GPU thread's queue (where a thread before it
    // fills it), and how its start went. The flags are under mutex_.
    struct Lane {
        Queue gpu_queue;
        bool tried = false;    // enter_lane has returned on its GPU thread
        bool started = false;  // and said yes
        bool entered = false;  // whether it runs is decided
        bool runs = false;     // it takes images: entered, not left out, not retired
    };

    // The queue a lane's GPU thread takes from: its own behind a thread
    // before it, else the one every lane shares.
    Queue& gpu_queue_of(std::size_t lane) {
        return prepares() ? lanes_[lane].gpu_queue : gpu_queue_;
    }

    // A lane whose start fails is left out; lane 0 runs all the same where
    // no lane starts, since the batch needs one.
    void gpu_thread(std::size_t lane) {
        const bool started = !stages_.enter_lane || stages_.enter_lane(lane);
        bool runs = started;
        {
            std::unique_lock<std::mutex> lock(mutex_);
            lanes_[lane].tried = true;
            lanes_[lane].started = started;
            changed_.notify_all();
            if (!started && lane == 0) {
                const auto tried = [](const Lane& l) { return l.tried; };
                while (!std::all_of(lanes_.begin(), lanes_.end(), tried) && !fatal_stop_) {
                    changed_.wait_for(lock, kStopPoll);
                }
                runs = std::none_of(lanes_.begin(), lanes_.end(),
                                    [](const Lane& l) { return l.started; });
            }
            lanes_[lane].entered = true;
            lanes_[lane].runs = runs;
            if (!runs) give_back_share_in_flight();
        }
        changed_.notify_all();
        if (!runs) {
            if (stages_.left_lane) stages_.left_lane(lane, std::string());
            return;
        }
        relay(gpu_queue_of(lane), stages_.filter, encode_queue_, {}, lane);
    }

    // Takes no image before the lane's GPU thread has entered it, so that a
    // device still starting holds none.
    void prepare_thread(std::size_t lane) {
        {
            std::unique_lock<std::mutex> lock(mutex_);
            while (!lanes_[lane].entered && !all_done()) changed_.wait_for(lock, kStopPoll);
            if (!lanes_[lane].runs) return;
        }
        if (stages_.bind_lane) stages_.bind_lane(lane);
        relay(prepare_queue_, stages_.prepare_for_gpu, lanes_[lane].gpu_queue, stages_.gpu_group,
              lane);
    }

    // Whether a lane that feeds `to` has work enough queued, among several
    // lanes: the image stays in the shared queue for whichever lane runs
    // out first. Under mutex_.
    bool lane_has_enough(const Queue& to) const {
        return lanes_.size() > 1 && &to != &encode_queue_ && to.size() >= kAheadOfNext;
    }

    // One thread's loop: images from `from`, in order, through `stage` (if
    // any), on to `to`, until every image is done. A lane's GPU thread (the
    // filter) and the one before it (gpu_group, prepare_for_gpu) are such
    // loops; each image taken is marked `lane`'s. With a `group_stage`, the
    // loop takes all the images queued (up to options_.gpu_group) and gives
    // them to it together first.
    void relay(Queue& from, const std::function<void(WorkItem&)>& stage, Queue& to,
               const GroupStage& group_stage, std::size_t lane) {
        const std::size_t most = group_stage ? std::max<std::size_t>(1, options_.gpu_group) : 1;
        std::vector<std::unique_ptr<WorkItem>> items;
        for (;;) {
            items.clear();
            {
                std::unique_lock<std::mutex> lock(mutex_);
                while ((from.empty() || lane_has_enough(to)) && !all_done() && lanes_[lane].runs) {
                    changed_.wait_for(lock, kStopPoll);
                }
                if (from.empty() || !lanes_[lane].runs) return;  // done, or retired
                // A larger group is cheaper an image (nvJPEG's batched decode):
                // while the next thread has images enough to work on, wait
                // for more, up to `most`.
                while (group_stage && from.size() < most && to.size() >= kAheadOfNext &&
                       !stopping()) {
                    changed_.wait_for(lock, kStopPoll);
                }
                while (!from.empty() && items.size() < most) {
                    items.push_back(std::move(from.front()));
                    from.pop_front();
                    items.back()->lane = lane;
                }
            }
            // Another lane's thread before took them while this one waited
            // for more (the wait above lets go of the lock; they share `from`).
            if (items.empty()) continue;
            changed_.notify_all();  // a thread before may wait for room
            if (group_stage && !stopping()) {
                std::vector<WorkItem*> group;
                for (const auto& item : items) group.push_back(item.get());
                group_stage(group);
            }
            for (auto& item : items) {
                if (!pass_on(std::move(item), stage, to, lane)) return;  // retired
            }
        }
    }

    // False where `lane` was retired on the way (its device lost): `item`
    // is back in the shared queue for the others.
    bool pass_on(std::unique_ptr<WorkItem> item, const std::function<void(WorkItem&)>& stage,
                 Queue& to, std::size_t lane) {
        const std::size_t index = item->index;
        if (stopping()) {
            drop(index);
            return true;
        }
        bool lost = false;
        std::string why;
        const bool passed = !stage || attempt(index, [&] {
            try {
                stage(*item);
            } catch (const DeviceLost& e) {
                if (!retire(lane)) throw;  // the last lane running: the image fails
                lost = true;
                why = e.what();
            }
        });
        if (lost) {
            hand_back(std::move(item));
            if (stages_.left_lane) stages_.left_lane(lane, why);
            return false;
        }
        if (!passed) {
            release();
            return true;
        }
        {
            const std::lock_guard<std::mutex> lock(mutex_);
            // A thread before a lane retired meanwhile: the image is another lane's.
            const bool retired = &to == &lanes_[lane].gpu_queue && !lanes_[lane].runs;
            (retired ? prepare_queue_ : to).push_back(std::move(item));
        }
        changed_.notify_all();
        return true;
    }

    // A lane's device is lost: where another lane runs, this one takes no
    // more images, and the images its GPU thread has queued go back to the
    // shared queue. False where it is the last lane running. A lane still
    // starting may yet run: the answer waits until every lane has entered.
    bool retire(std::size_t lane) {
        {
            std::unique_lock<std::mutex> lock(mutex_);
            const auto starting = [this, lane] {
                for (std::size_t l = 0; l < lanes_.size(); ++l) {
                    if (l != lane && !lanes_[l].entered) return true;
                }
                return false;
            };
            while (starting() && !stopping()) changed_.wait_for(lock, kStopPoll);
            bool other = false;
            for (std::size_t l = 0; l < lanes_.size(); ++l) other |= l != lane && lanes_[l].runs;
            if (!other) return false;
            lanes_[lane].runs = false;
            give_back_share_in_flight();
            Queue& own = lanes_[lane].gpu_queue;
            Queue& shared = prepares() ? prepare_queue_ : gpu_queue_;
            for (auto it = own.rbegin(); it != own.rend(); ++it) shared.push_front(std::move(*it));
            own.clear();
        }
        changed_.notify_all();
        return true;
    }

    // An image a retired lane held, back in front of the shared queue.
    void hand_back(std::unique_ptr<WorkItem> item) {
        {
            const std::lock_guard<std::mutex> lock(mutex_);
            (prepares() ? prepare_queue_ : gpu_queue_).push_front(std::move(item));
        }
        changed_.notify_all();
    }

    // Runs a stage; a failure is reported and the image given up.
    template <typename Stage>
    bool attempt(std::size_t index, Stage&& stage) {
        try {
            stage();
            return true;
        } catch (const UsageError&) {
            {
                const std::lock_guard<std::mutex> lock(mutex_);
                if (!fatal_) fatal_ = std::current_exception();
            }
            fatal_stop_ = true;
            stages_.dropped(index);
        } catch (const SkipImage& e) {
            stages_.skipped(index, e.what());
        } catch (const Cancelled&) {
            stages_.dropped(index);  // stopped on request: not done, not failed
        } catch (const std::exception& e) {
            stages_.failed(index, e.what());
        }
        return false;
    }

    void drop(std::size_t index) {
        stages_.dropped(index);
        release();
    }

    void release() {
        {
            const std::lock_guard<std::mutex> lock(mutex_);
            --in_flight_;
        }
        changed_.notify_all();
    }

    const PipelineStages& stages_;
    const PipelineOptions& options_;
    std::mutex mutex_;
    std::condition_variable changed_;
    Queue prepare_queue_;  // bound for the GPU, before prepare_for_gpu: every lane's
    Queue gpu_queue_;      // bound for the GPU where no thread is before it: every lane's
    Queue encode_queue_;
    std::deque<Lane> lanes_{std::max<std::size_t>(1, options_.lanes)};
    std::size_t next_ = 0;
    std::size_t in_flight_ = 0;
    std::exception_ptr fatal_;
    std::atomic<bool> fatal_stop_{false};
    // Under mutex_: options_'s, unless the system would not start that many workers.
    int workers_ = 0;
    std::size_t max_in_flight_ = options_.max_in_flight;
};

}  // namespace

void run_pipeline(const PipelineStages& stages, const PipelineOptions& options) {
    Pipeline(stages, options).run();
}

}  // namespace cudaconv
