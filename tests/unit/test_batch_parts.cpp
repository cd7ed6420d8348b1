// The batch's pure parts: the progress line, the summary, {dir} in output
// templates, and input expansion on a small tree.
#include <catch2/catch.hpp>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <tuple>

#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <unistd.h>

#include "batch/heap_reuse.hpp"
#include "batch/json_lines.hpp"
#include "io/inputs.hpp"
#include "batch/plan.hpp"
#include "batch/prefaulted_output.hpp"
#include "batch/progress.hpp"
#include "io/output_path.hpp"
#include "base/errors.hpp"

namespace cudaconv {
namespace fs = std::filesystem;

TEST_CASE("progress line: count, percent, bar, rate, ETA, failures", "[batch]") {
    ProgressState s;
    s.total = 200;
    s.done = 49;
    s.failed = 1;
    s.elapsed_s = 10.0;  // 5 images/s, 150 left: 30 s
    const std::string line = progress_line(s, 100);
    CHECK(line == " 50/200   25%  [##########..............................]  5.0 images/s  "
                  "ETA 0:30  (1 failed)");
    CHECK(line.size() < 100);
    // Narrow terminals lose the bar, never the numbers.
    const std::string narrow = progress_line(s, 50);
    CHECK(narrow.find('[') == std::string::npos);
    CHECK(narrow.find("5.0 images/s") != std::string::npos);
    s.done = 199;
    CHECK(progress_line(s, 100).find("ETA") == std::string::npos);  // finished: no ETA
}

TEST_CASE("summary line and JSON", "[batch]") {
    BatchSummary s;
    s.done = 198;
    s.failed = 2;
    s.wall_s = 12.5;
    CHECK(summary_line(s, 200, 0) ==
          "done 198, skipped 0, failed 2 of 200 images in 12.5 s (15.84 images/s)");
    s.not_done = 10;
    CHECK(summary_line(s, 210, SIGINT).find("not done 10") != std::string::npos);
    CHECK(summary_line(s, 210, SIGINT).find("stopped by SIGINT") != std::string::npos);
    const auto j = summary_json(s, 210, SIGINT);
    CHECK(j["interrupted"] == true);
    CHECK(j["done"] == 198);
}

// With several devices a failed image's JSON line names its device; with
// one, or where it ran on none, the line has no "device".
TEST_CASE("a failed image's JSON line has its device where one was given", "[batch][devices]") {
    const std::filesystem::path path =
        std::filesystem::temp_directory_path() /
        ("cudaconv_failed_device_" + std::to_string(::getpid()) + ".jsonl");
    {
        JsonLines json(path.string(), true);
        BatchProgress progress({2, false, false, &json, "", {0, 1}});
        progress.failed("a.png", "a.png: smem on device 1: an illegal address", 1);
        progress.failed("b.png", "b.png: cannot read", -1);
    }
    std::ifstream in(path);
    std::string first, second;
    std::getline(in, first);
    std::getline(in, second);
    std::filesystem::remove(path);
    const auto a = nlohmann::json::parse(first);
    CHECK(a["status"] == "failed");
    CHECK(a["device"] == 1);
    CHECK_FALSE(nlohmann::json::parse(second).contains("device"));
}

// Silent on success: a clean batch's summary is a -v line; one that failed
// any of its work, or was stopped, says how much it did by default.
TEST_CASE("summary level: -v for a clean batch, shown where work was not done", "[batch]") {
    using spdlog::level::debug;
    using spdlog::level::info;
    BatchSummary s;
    s.done = 3;
    CHECK(summary_level(s, 3, 0, false) == debug);
    CHECK(summary_level(s, 3, 0, true) == info);  // a --json line lost
    CHECK(summary_level(s, 3, SIGINT, false) == info);
    s.skipped = 1;
    CHECK(summary_level(s, 4, 0, false) == debug);  // skipping is what was asked
    s.failed = 1;
    CHECK(summary_level(s, 5, 0, false) == info);
    s = {};
    s.done = 2;
    s.not_done = 1;  // a usage error part way (a named variant refusing an image)
    CHECK(summary_level(s, 3, 0, false) == info);
    s = {};
    s.done = 1;  // one image: its own lines said it all, unless a signal stopped it
    CHECK_FALSE(summary_level(s, 1, 0, false));
    s = {};
    s.failed = 1;
    CHECK_FALSE(summary_level(s, 1, 0, false));
    s.failed = 0;
    s.not_done = 1;
    CHECK(summary_level(s, 1, SIGTERM, false) == info);
}

TEST_CASE("{dir} mirrors the input's folder, a folder output mirrors too", "[batch]") {
    OutputRequest r{"out/{dir}/{stem}-{filter}.png", "", "edge", "cpu", true, ""};
    CHECK(resolve_output(r, {"in/x/y/a.jpg", "x/y"}).path == "out/x/y/a-edge.png");
    CHECK(resolve_output(r, {"in/a.jpg", ""}).path == "out/a-edge.png");
    r.output = "out/";
    CHECK(resolve_output(r, {"in/x/a.jpg", "x"}).path == "out/x/a.jpg");
    CHECK(resolve_output(r, {"in/a.jpg", ""}).path == "out/a.jpg");
}

TEST_CASE("the existing-output options exclude each other", "[batch]") {
    CHECK(existing_outputs_policy(false, false) == ExistingOutputs::refuse);
    CHECK(existing_outputs_policy(true, false) == ExistingOutputs::skip);
    CHECK(existing_outputs_policy(false, true) == ExistingOutputs::overwrite);
    CHECK_THROWS_AS(existing_outputs_policy(true, true), UsageError);
}

// A sanitizer's allocator (ASan, TSan, MSan) replaces glibc's malloc: it
// ignores mallopt and mallinfo2 says nothing about its blocks.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CUDACONV_SANITIZER_HEAP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define CUDACONV_SANITIZER_HEAP 1
#endif
#endif

#if defined(__GLIBC__)
// An image-sized block comes from the heap, not a mapping of its own, and
// stays there once freed: the next image's block is the same memory. The
TEST_CASE("a prefaulted output is handed over only when it is what was asked for", "[batch]") {
    PrefaultedOutput output;
    output.start(300, 400, CV_8UC3);
    const cv::Mat image = output.take(300, 400, CV_8UC3);
    CHECK(image.rows == 300);
    CHECK(image.cols == 400);
    CHECK(image.type() == CV_8UC3);
    CHECK(output.take(300, 400, CV_8UC3).empty());  // handed over once

    for (const auto& [rows, cols, type] :
         {std::tuple{300, 401, CV_8UC3}, std::tuple{301, 400, CV_8UC3},
          std::tuple{300, 400, CV_16UC3}, std::tuple{300, 400, CV_8UC4}}) {
        PrefaultedOutput guessed;
        guessed.start(300, 400, CV_8UC3);
        CHECK(guessed.take(rows, cols, type).empty());
    }
    PrefaultedOutput never_started;
    CHECK(never_started.take(300, 400, CV_8UC3).empty());
}

TEST_CASE("touch_pages writes to every page, the last one too", "[batch]") {
    for (const int threads : {1, 4}) {
        // A region that starts and ends inside pages: a ROI of whole rows.
        cv::Mat whole(100, 4097, CV_8UC1, cv::Scalar(7));
        cv::Mat rows = whole.rowRange(3, 97);
        touch_pages(rows, threads);
        const std::size_t bytes = rows.total();
        const std::uintptr_t start = reinterpret_cast<std::uintptr_t>(rows.data);
        std::size_t touched = 0;
        // Each page the region reaches has a byte it set to 0.
        for (std::uintptr_t page = start & ~std::uintptr_t{4095}; page < start + bytes;
             page += 4096) {
            bool zero = false;
            for (std::uintptr_t at = std::max(page, start);
                 at < std::min(page + 4096, start + bytes) && !zero; ++at) {
                zero = *reinterpret_cast<const std::uint8_t*>(at) == 0;
            }
            CHECK(zero);
            touched += zero;
        }
        CHECK(touched >= bytes / 4096);
        CHECK(whole.ptr(3)[-1] == 7);  // nothing before the region
        CHECK(whole.ptr(97)[0] == 7);  // nor after it (a ROI's dataend is its parent's)
    }
    cv::Mat columns = cv::Mat(10, 10, CV_8UC1).colRange(2, 5);
    CHECK_THROWS_AS(touch_pages(columns), std::invalid_argument);
}

// settings stay for the rest of the process, as they do in cudaconv (ctest
// runs each test case in a process of its own).
TEST_CASE("image-sized blocks stay in the heap once freed", "[batch]") {
#if defined(CUDACONV_SANITIZER_HEAP)
    WARN("skipped: built with a sanitizer, whose allocator replaces glibc's heap");
    SUCCEED();
#else
    REQUIRE(keep_freed_buffers_in_heap());  // glibc 2.36 (Debian 12) takes all three
    constexpr std::size_t kImageBytes = std::size_t{36} << 20;  // 4000x3000 RGB
    const std::size_t mapped_before = mallinfo2().hblkhd;
    void* first = std::malloc(kImageBytes);
    REQUIRE(first != nullptr);
    CHECK(mallinfo2().hblkhd == mapped_before);  // not mapped on its own
    const std::size_t heap_in_use = mallinfo2().arena;
    std::free(first);
    CHECK(mallinfo2().arena == heap_in_use);  // not given back to the kernel
    void* second = std::malloc(kImageBytes);
    CHECK(second == first);
    std::free(second);
#endif
}
#endif

}  // namespace cudaconv
