#include "batch/progress.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "batch/interrupt.hpp"
#include "base/errors.hpp"
#include "core/json_text.hpp"
#include "io/image_io.hpp"

namespace cudaconv {
namespace {

using Clock = std::chrono::steady_clock;

// Redraws at most this often: a terminal repainting faster is only flicker.
constexpr auto kRedrawInterval = std::chrono::milliseconds(100);
constexpr int kDefaultColumns = 80;
// The bar's share of the line, and its bounds in cells.
constexpr int kMinBarCells = 10;
constexpr int kMaxBarCells = 40;

int terminal_columns() {
    winsize size{};
    if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
    return kDefaultColumns;
}

std::string clock_text(double seconds) {
    const auto s = static_cast<long long>(std::llround(std::max(0.0, seconds)));
    if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
    return fmt::format("{}:{:02}", s / 60, s % 60);
}

void write_stderr(const std::string& text) {
    std::fputs(text.c_str(), stderr);
    std::fflush(stderr);
}

}  // namespace

bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }

std::string progress_line(const ProgressState& s, int columns) {
    const std::size_t finished = s.done + s.failed;
    const double rate = s.elapsed_s > 0.0 ? static_cast<double>(finished) / s.elapsed_s : 0.0;
    const std::string count =
        fmt::format("{:>{}}/{}", finished, fmt::format("{}", s.total).size(), s.total);
    const int percent = s.total ? static_cast<int>(100 * finished / s.total) : 100;
    std::string tail = rate > 0.0 ? fmt::format("  {:.1f} images/s", rate) : "  -- images/s";
    if (rate > 0.0 && finished < s.total) {
        tail += "  ETA " + clock_text(static_cast<double>(s.total - finished) / rate);
    }
    if (s.failed) tail += fmt::format("  ({} failed)", s.failed);
    const std::string head = fmt::format("{}  {:>3}%  ", count, percent);
    const int room = columns - 1 - static_cast<int>(head.size() + tail.size()) - 2;
    if (room < kMinBarCells) return (head + tail.substr(2)).substr(0, std::max(columns - 1, 0));
    const int cells = std::min(room, kMaxBarCells);
    const int filled =
        s.total ? static_cast<int>(static_cast<std::size_t>(cells) * finished / s.total) : cells;
    return head + "[" + std::string(static_cast<std::size_t>(filled), '#') +
           std::string(static_cast<std::size_t>(cells - filled), '.') + "]" + tail;
}

std::string summary_line(const BatchSummary& s, std::size_t total, int signal_number,
                         const std::string& shard) {
    std::string line = fmt::format("done {}, skipped {}, failed {}", s.done, s.skipped, s.failed);
    if (signal_number != 0 || s.not_done) line += fmt::format(", not done {}", s.not_done);
    line += fmt::format(" of {} image{} in {:.1f} s ({:.2f} images/s)", total,
                        total == 1 ? "" : "s", s.wall_s, s.images_per_s());
    if (!shard.empty()) line += "; shard " + shard;
    if (s.by_device.size() > 1) {
        std::string each;
        for (const auto& [device, done] : s.by_device) {
            each += fmt::format("{}{}: {}", each.empty() ? "" : ", ", device, done);
        }
        line += "; devices " + each;
    }
    if (signal_number != 0) {
        line += fmt::format("; stopped by {}", signal_name(signal_number));
    }
    return line;
}

nlohmann::json summary_json(const BatchSummary& s, std::size_t total, int signal_number,
                            const std::string& shard) {
    nlohmann::json line = {{"summary", true},
                           {"total", total},
                           {"done", s.done},
                           {"skipped", s.skipped},
                           {"failed", s.failed},
                           {"not_done", s.not_done},
                           {"wall_s", s.wall_s},
                           {"images_per_s", s.images_per_s()},
                           {"interrupted", signal_number != 0}};
    if (!shard.empty()) line["shard"] = shard;
    if (!s.by_device.empty()) {
        nlohmann::json devices = nlohmann::json::array();
        for (const auto& [device, done] : s.by_device) {
            devices.push_back({{"device", device}, {"done", done}});
        }
        line["devices"] = devices;
    }
    return line;
}

std::optional<spdlog::level::level_enum> summary_level(const BatchSummary& s, std::size_t total,
                                                       int signal_number, bool json_failed) {
    if (signal_number != 0) return spdlog::level::info;
    if (total <= 1) return std::nullopt;
    if (s.failed != 0 || s.not_done != 0 || json_failed) return spdlog::level::info;
    return spdlog::level::debug;
}

BatchProgress::BatchProgress(const ProgressOptions& options)
    : options_(options), start_(Clock::now()) {
    counts_ = {};
    for (const int device : options_.devices) counts_.by_device[device] = 0;
}

BatchProgress::~BatchProgress() {
    const std::lock_guard<std::mutex> lock(mutex_);
    clear_bar();
}

void BatchProgress::skipped(const std::string& input, const std::string& output) {
    const std::lock_guard<std::mutex> lock(mutex_);
    ++counts_.skipped;
    log_line(spdlog::level::debug, fmt::format("{}: skipped, {} exists", input, output));
    emit_json({{"input", input}, {"output", output}, {"status", "skipped"}});
}

void BatchProgress::done(const ImageReport& report, std::size_t index) {
    const std::lock_guard<std::mutex> lock(mutex_);
    ++counts_.done;
    if (report.device >= 0) ++counts_.by_device[report.device];
    log_line(spdlog::level::debug, fmt::format("{} -> {} ({}x{}, {}, {}, {:.1f} ms)", report.input,
                                               report.output, report.width, report.height,
                                               report.filter, report.variant, report.total_ms));
    if (options_.timings) {
        clear_bar();
        print_timings(report.output == "<stdout>" ? stderr : stdout, report);
        std::fflush(stdout);
    }
    nlohmann::json line = to_json(report);
    line["status"] = "done";
    line["index"] = index;
    // When the image started and finished, from the batch's start: a
    // timeline of the workers (stalls, the order of work) for tuning.
    const double started_ms =
        std::max(0.0, std::chrono::duration<double, std::milli>(report.started - start_).count());
    line["batch_ms"] = {{"start", started_ms}, {"end", started_ms + report.total_ms}};
    emit_json(line);
    redraw(false);
}

void BatchProgress::failed(const std::string& input, const std::string& message, int device) {
    const std::lock_guard<std::mutex> lock(mutex_);
    ++counts_.failed;
    log_line(spdlog::level::err, message);
    nlohmann::json line = {{"input", input}, {"status", "failed"}, {"error", message}};
    if (device >= 0) line["device"] = device;
    emit_json(line);
    redraw(true);
}

void BatchProgress::log_above(const std::string& message, spdlog::level::level_enum level) {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!spdlog::should_log(level)) return;
    log_line(level, message);
    redraw(true);
}

BatchSummary BatchProgress::finish(int signal_number) {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (bar_shown_) redraw(true);
    clear_bar();
    counts_.wall_s = std::chrono::duration<double>(Clock::now() - start_).count();
    const std::size_t total = options_.total;
    counts_.not_done = total - counts_.done - counts_.skipped - counts_.failed;
    if (const auto level = summary_level(counts_, total, signal_number, json_failed_)) {
        spdlog::log(*level, "{}", summary_line(counts_, total, signal_number, options_.shard));
    }
    emit_json(summary_json(counts_, total, signal_number, options_.shard));
    return counts_;
}

// Under mutex_. After a failed write (a full disk, a closed pipe) the rest
// of the lines are dropped: one error, and the images go on.
void BatchProgress::emit_json(const nlohmann::json& line) {
    if (options_.json == nullptr || json_failed_) return;
    try {
        options_.json->write_line(json_text(line));
    } catch (const WorkError& e) {
        json_failed_ = true;
        clear_bar();
        spdlog::error("{}", e.what());
    }
}

// Under mutex_.
void BatchProgress::redraw(bool force) {
    if (!options_.progress_bar) return;
    const auto now = Clock::now();
    if (!force && bar_shown_ && now - last_draw_ < kRedrawInterval) return;
    last_draw_ = now;
    ProgressState state;
    state.total = options_.total - counts_.skipped;
    state.done = counts_.done;
    state.failed = counts_.failed;
    state.elapsed_s = std::chrono::duration<double>(now - start_).count();
    write_stderr("\r" + progress_line(state, terminal_columns()) + "\033[K");
    bar_shown_ = true;
}

// Under mutex_. The bar, if shown, is cleared first; the next report
// draws it again below the line.
void BatchProgress::log_line(spdlog::level::level_enum level, const std::string& message) {
    if (!spdlog::should_log(level)) return;
    clear_bar();
    spdlog::log(level, "{}", message);
}

// Under mutex_.
void BatchProgress::clear_bar() {
    if (!bar_shown_) return;
    write_stderr("\r\033[K");
    bar_shown_ = false;
}

}  // namespace cudaconv
