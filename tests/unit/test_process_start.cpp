// base/process_start.hpp in this process: the stack limit and new threads'
// stacks left alone where the limit is ample, raised where it is small.
#include <catch2/catch.hpp>

#include <pthread.h>
#include <sys/resource.h>

#include <cstddef>

#include "base/process_start.hpp"

namespace cudaconv {
namespace {

std::size_t default_thread_stack() {
    pthread_attr_t attr;
    REQUIRE(pthread_getattr_default_np(&attr) == 0);
    std::size_t size = 0;
    REQUIRE(pthread_attr_getstacksize(&attr, &size) == 0);
    pthread_attr_destroy(&attr);
    return size;
}

// Puts back the limit and the threads' default stack as they were.
class KeepStackSettings {
public:
    KeepStackSettings() {
        REQUIRE(getrlimit(RLIMIT_STACK, &limit_) == 0);
        REQUIRE(pthread_getattr_default_np(&attr_) == 0);
    }
    KeepStackSettings(const KeepStackSettings&) = delete;
    KeepStackSettings& operator=(const KeepStackSettings&) = delete;
    ~KeepStackSettings() {
        setrlimit(RLIMIT_STACK, &limit_);
        pthread_setattr_default_np(&attr_);
        pthread_attr_destroy(&attr_);
    }
    const rlimit& limit() const { return limit_; }

private:
    rlimit limit_{};
    pthread_attr_t attr_{};
};

}  // namespace

// src/batch/pipeline.cpp's let_go_half counts on the system's default.
TEST_CASE("an ample stack limit and thread stacks are left as they are", "[unit][start]") {
    const KeepStackSettings kept;
    if (kept.limit().rlim_cur != RLIM_INFINITY && kept.limit().rlim_cur < kMinStackBytes) {
        FAIL("this test process runs under a stack limit below kMinStackBytes");
    }
    const std::size_t before = default_thread_stack();
    CHECK(ensure_stack_limit(kMinStackBytes).empty());
    rlimit after{};
    REQUIRE(getrlimit(RLIMIT_STACK, &after) == 0);
    CHECK(after.rlim_cur == kept.limit().rlim_cur);
    CHECK(default_thread_stack() == before);
}

TEST_CASE("a small soft stack limit is raised and new threads get the minimum", "[unit][start]") {
    const KeepStackSettings kept;
    if (kept.limit().rlim_max != RLIM_INFINITY && kept.limit().rlim_max < kMinStackBytes) {
        return;  // the hard limit here leaves nothing to raise to
    }
    const rlimit small{64 << 10, kept.limit().rlim_max};
    REQUIRE(setrlimit(RLIMIT_STACK, &small) == 0);
    CHECK(ensure_stack_limit(kMinStackBytes).empty());
    rlimit after{};
    REQUIRE(getrlimit(RLIMIT_STACK, &after) == 0);
    CHECK(after.rlim_cur == kMinStackBytes);
    CHECK(after.rlim_max == kept.limit().rlim_max);
    CHECK(default_thread_stack() >= kMinStackBytes);
}

}  // namespace cudaconv
