#pragma once
// Every thread cudaconv starts, started without throwing and joined when
// its group goes.
//
// std::thread's constructor throws std::system_error when the system will
// not make a thread (EAGAIN: no address space left for its stack, or the
// process's or user's limit on threads reached: ulimit -v, -s, -u, a
// container's pids limit), and a std::thread still joinable when it is
// destroyed ends the process (std::terminate). Here a thread that cannot be
// started is a false from start(), with the reason, and each caller decides
// what to do without it: fewer workers, the work on the calling thread, or
// a batch that fails with a message.
#include <cstddef>
#include <new>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace cudaconv {

class ThreadGroup {
public:
    ThreadGroup() = default;
    ~ThreadGroup() { join(); }
    ThreadGroup(const ThreadGroup&) = delete;
    ThreadGroup& operator=(const ThreadGroup&) = delete;

    // Starts body() on a thread of its own; false, with failure() saying
    // why, when the system will not make one.
    template <typename Body>
    bool start(Body&& body) {
        try {
            threads_.emplace_back(std::forward<Body>(body));  // left as it was if this throws
            return true;
        } catch (const std::system_error& e) {
            failure_ = e.code();
        } catch (const std::bad_alloc&) {
            failure_ = std::make_error_code(std::errc::not_enough_memory);
        }
        return false;
    }

    // Waits for every thread started. The caller makes sure they end.
    void join() { join_after(0); }
    // Waits for the threads started after the first `keep`, and forgets them.
    void join_after(std::size_t keep);

    std::size_t size() const { return threads_.size(); }  // started, not yet joined
    // Why the last start() failed ("Resource temporarily unavailable").
    std::error_code failure() const { return failure_; }

private:
    std::vector<std::thread> threads_;
    std::error_code failure_;
};

}  // namespace cudaconv
