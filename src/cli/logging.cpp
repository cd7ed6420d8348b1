#include "cli/logging.hpp"

#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "base/printable.hpp"

namespace cudaconv {
namespace {

// The message (%v) with its control characters and stray bytes escaped
// (base/printable.hpp): whatever user text a message carries, it cannot
// hold a terminal code or a newline. The escaping where specs and paths
// are echoed makes their text exact; this is the net under the rest.
class PrintableMessage : public spdlog::custom_flag_formatter {
public:
    void format(const spdlog::details::log_msg& msg, const std::tm&,
                spdlog::memory_buf_t& dest) override {
        const std::string text = printable({msg.payload.data(), msg.payload.size()});
        dest.append(text.data(), text.data() + text.size());
    }
    std::unique_ptr<custom_flag_formatter> clone() const override {
        return std::make_unique<PrintableMessage>();
    }
};

}  // namespace

bool log_colour_wanted(bool stderr_is_terminal, const char* no_color) {
    return stderr_is_terminal && (no_color == nullptr || no_color[0] == '\0');
}

void init_logging() {
    const bool colour = log_colour_wanted(::isatty(STDERR_FILENO) == 1, std::getenv("NO_COLOR"));
    auto logger = spdlog::stderr_color_mt("cudaconv", colour ? spdlog::color_mode::always
                                                             : spdlog::color_mode::never);
    auto formatter = std::make_unique<spdlog::pattern_formatter>();
    formatter->add_flag<PrintableMessage>('*').set_pattern("%n: %^%l%$: %*");
    logger->set_formatter(std::move(formatter));
    logger->set_level(spdlog::level::info);
    spdlog::set_default_logger(logger);
}

void add_log_options(CLI::App& app, LogOptions& options) {
    app.add_flag("-v,--verbose", options.verbose,
                 "What ran: auto's choice, each image (-vv: trace)");
    app.add_flag("-q,--quiet", options.quiet, "Only errors on stderr");
    app.add_option("--log-level", options.level, "Log level")
        ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
}

void apply_log_options(const LogOptions& o) {
    auto level = spdlog::level::info;
    if (o.quiet) level = spdlog::level::err;
    if (o.verbose == 1) level = spdlog::level::debug;
    if (o.verbose >= 2) level = spdlog::level::trace;
    if (!o.level.empty()) level = spdlog::level::from_str(o.level);
    spdlog::set_level(level);
}

}  // namespace cudaconv
