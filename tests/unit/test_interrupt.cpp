// What a signal handler relies on: the table of temporary files being
// written, however many writes are under way, and the signals' names.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "batch/interrupt.hpp"
#include "io/image_io.hpp"

namespace cudaconv {
namespace {
namespace fs = std::filesystem;

constexpr int kWrites = 150;  // more than two blocks of the table (64 slots each)
std::atomic<int> g_writes_stuck{0};

// SIGXFSZ, in each writing thread as its write reaches the file size limit:
// the thread stays here, its temporary file pending, until the last one
// comes, which removes them all as a signal handler that ends the process
// would.
void hold_until_all_stuck(int /*signal*/) {
    if (++g_writes_stuck == kWrites) {
        remove_pending_temp_files();
        _exit(42);
    }
    for (;;) pause();
}

}  // namespace

TEST_CASE("a signal removes the temporary files of every write under way, past 64",
          "[io][signal]") {
    std::string pattern = (fs::temp_directory_path() / "cudaconv-pending-XXXXXX").string();
    REQUIRE(mkdtemp(pattern.data()) != nullptr);
    const fs::path dir = pattern;
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        signal(SIGXFSZ, hold_until_all_stuck);
        const rlimit small{65536, 65536};
        setrlimit(RLIMIT_FSIZE, &small);
        const std::vector<std::uint8_t> bytes(1 << 20, 1);
        std::vector<std::thread> writers;
        for (int i = 0; i < kWrites; ++i) {
            writers.emplace_back([&, i] {
                try {
                    write_file_atomically((dir / ("out" + std::to_string(i) + ".png")).string(),
                                          bytes);
                } catch (...) {
                }
            });
        }
        for (std::thread& writer : writers) writer.join();
        _exit(1);  // the handler did not end it
    }
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
    std::vector<std::string> left;
    for (const auto& e : fs::directory_iterator(dir)) left.push_back(e.path().filename());
    fs::remove_all(dir);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 42);
    CHECK(left.empty());
}

TEST_CASE("signals are named as the summary names them", "[batch][signal]") {
    CHECK(signal_name(SIGINT) == "SIGINT");
    CHECK(signal_name(SIGHUP) == "SIGHUP");
    CHECK(signal_name(SIGTERM) == "SIGTERM");
}

}  // namespace cudaconv
