#pragma once
// What a batch tells the user as it goes, and at the end. Silent on
// success, as cp and convert are: failures are error lines, and the line
// per image and a clean batch's summary are debug lines (-v). On a
// terminal, one progress line on stderr redrawn in place (count, images/s,
// ETA) with any log line printed above it. --json adds one JSON line per
// image (done, skipped or failed) and a summary line, each written as it is
// made. Thread-safe: workers report as they finish, so lines come in the
// order images finish, not the order of the inputs.
#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <spdlog/common.h>

#include "batch/json_lines.hpp"
#include "batch/image_report.hpp"

namespace cudaconv {

struct ProgressState {
    std::size_t total = 0;  // images to process (skipped ones not counted)
    std::size_t done = 0;
    std::size_t failed = 0;
    double elapsed_s = 0.0;
};

// "  37/200  18%  [#####.....]  4.1 images/s  ETA 0:40  (1 failed)",
// fitted to `columns`. A pure function, so it can be tested.
std::string progress_line(const ProgressState& state, int columns);

struct BatchSummary {
    std::size_t done = 0;
    std::size_t skipped = 0;
    std::size_t failed = 0;
    std::size_t not_done = 0;  // left when interrupted: the rest of the total
    double wall_s = 0.0;
    // Images done on each CUDA device, by CUDA's number: every device the
    // batch chose (ProgressOptions::devices), those that did none with 0.
    std::map<int, std::size_t> by_device;
    double images_per_s() const { return wall_s > 0.0 ? static_cast<double>(done) / wall_s : 0.0; }
};

// "done 198, skipped 0, failed 2 of 200 images in 12.3 s (16.1 images/s)",
// then "; shard 1/4" under --shard, then "; devices 0: 103, 1: 95" where
// more than one device filtered. The JSON summary's "shard" is "1/4", and
// its "devices" [{"device": 0, "done": 103}, ...] lists every device the
// batch chose or used (absent where none: a CPU batch).
std::string summary_line(const BatchSummary& summary, std::size_t total, int signal_number,
                         const std::string& shard = {});
nlohmann::json summary_json(const BatchSummary& summary, std::size_t total, int signal_number,
                            const std::string& shard = {});

// The level the summary line is logged at. Info (shown unless -q) where a
// batch did not do all it was asked (images failed or not done, a --json
// line lost) or a signal stopped the run: the error lines alone do not say
// how much of it was done. Debug (-v) for a batch that did it all, which is
// silent. None for one image that no signal stopped: its own lines said it
// all.
std::optional<spdlog::level::level_enum> summary_level(const BatchSummary& summary,
                                                       std::size_t total, int signal_number,
                                                       bool json_failed);

struct ProgressOptions {
    std::size_t total = 0;      // planned images, skipped included
    bool progress_bar = false;  // progress_bar_wanted (cli/terminal.hpp)
    bool timings = false;       // --timings: stage times on stdout
    JsonLines* json = nullptr;  // --json FILE or -, opened (nullptr = none)
    std::string shard;          // "K/N" under --shard: named in the summary
    std::vector<int> devices;   // the CUDA devices the batch chose (--devices)
};

class BatchProgress {
public:
    explicit BatchProgress(const ProgressOptions& options);
    ~BatchProgress();
    BatchProgress(const BatchProgress&) = delete;
    BatchProgress& operator=(const BatchProgress&) = delete;

    void skipped(const std::string& input, const std::string& output);
    void done(const ImageReport& report, std::size_t index);
    // `device`: the CUDA device it ran on, given where the batch has
    // several (its JSON line's "device"); -1 leaves it out.
    void failed(const std::string& input, const std::string& message, int device = -1);
    // Prints the summary (log and JSON line). Every planned image not done,
    // skipped or failed by then counts as not done: those an interrupt
    // dropped and those it kept from starting.
    BatchSummary finish(int signal_number);
    // Whether a --json line could not be written (reported once, as it
    // happened): the command then exits 1.
    bool json_failed() const { return json_failed_; }
    // A log line printed above the progress line, which it would otherwise
    // break; nothing where `level` is not logged.
    void log_above(const std::string& message, spdlog::level::level_enum level);

private:
    void emit_json(const nlohmann::json& line);
    void log_line(spdlog::level::level_enum level, const std::string& message);
    void redraw(bool force);
    void clear_bar();

    ProgressOptions options_;
    std::mutex mutex_;
    std::chrono::steady_clock::time_point start_;
    std::chrono::steady_clock::time_point last_draw_{};
    BatchSummary counts_;
    bool json_failed_ = false;
    bool bar_shown_ = false;
};

// Whether stderr is a terminal (checked on the descriptor: the C stderr
// stream is replaced by configure_opencv_io).
bool stderr_is_terminal();

}  // namespace cudaconv
