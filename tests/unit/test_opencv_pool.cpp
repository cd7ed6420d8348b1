// OpenCV's pool where the system will not give it all its threads: TBB,
// which makes them, ends the process when one of its own threads cannot
// make the next (batch/opencv_pool.hpp). That takes more cores than this
// machine may have, so TBB is told to use 16 threads whatever the cores,
// in a process of its own (this binary again, running the hidden case).
// Only where OpenCV's pool is TBB (not the portable build's OpenCV).
#include <catch2/catch.hpp>

#if defined(CUDACONV_OPENCV_TBB)

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

#include <opencv2/core/utility.hpp>
#include <tbb/global_control.h>

#include "batch/opencv_pool.hpp"
#include "support/sanitizers.hpp"

namespace cudaconv {
namespace {

constexpr int kPoolThreads = 16;
// The stacks of about 8 more threads: 3 are left to the batch, and the pool
// takes half of the rest.
constexpr rlim_t kRoomBytes = rlim_t{80} << 20;

rlim_t address_space_in_use() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.rfind("VmSize:", 0) == 0) return std::stoull(line.substr(7)) * 1024;  // kB
    }
    FAIL("no VmSize in /proc/self/status");
    return 0;
}

}  // namespace

// Without start_opencv_pool, this loop ends the process (terminate, from a
// thread of TBB's: "pthread_create has failed").
TEST_CASE("OpenCV's pool under a limit, in a process of its own", "[.opencv-pool-child]") {
    const tbb::global_control many(tbb::global_control::max_allowed_parallelism, kPoolThreads);
    cv::setNumThreads(kPoolThreads);
    const rlim_t limit = address_space_in_use() + kRoomBytes;
    const rlimit small{limit, limit};
    REQUIRE(setrlimit(RLIMIT_AS, &small) == 0);
    start_opencv_pool();
    CHECK(cv::getNumThreads() > 1);
    CHECK(cv::getNumThreads() < kPoolThreads);
    std::atomic<int> done{0};
    cv::parallel_for_(cv::Range(0, 1000), [&](const cv::Range& r) { done += r.end - r.start; });
    CHECK(done == 1000);
}

TEST_CASE("OpenCV's pool is fitted to the threads the system gives", "[batch][threads]") {
#if defined(CUDACONV_TEST_UNDER_SANITIZER)
    std::cout << "not run: an address space limit under a sanitizer\n";
    return;
#endif
    char output[] = "/tmp/cudaconv-pool-XXXXXX";
    const int output_fd = mkstemp(output);
    REQUIRE(output_fd >= 0);
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        if (dup2(output_fd, 1) < 0 || dup2(output_fd, 2) < 0) _exit(127);
        execl("/proc/self/exe", "cudaconv_unit_tests", "[.opencv-pool-child]",
              static_cast<char*>(nullptr));
        _exit(127);
    }
    close(output_fd);
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
    std::ifstream printed(output);
    const std::string text((std::istreambuf_iterator<char>(printed)), {});
    unlink(output);
    INFO(text);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK_THAT(text, Catch::Contains("All tests passed"));
}

}  // namespace cudaconv

#endif  // CUDACONV_OPENCV_TBB
