#include "cli/logging.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace cudaconv {

void init_logging() {
    auto logger = spdlog::stderr_color_mt("cudaconv");
    logger->set_pattern("%n: %^%l%$: %v");
    logger->set_level(spdlog::level::info);
    spdlog::set_default_logger(logger);
}

void add_log_options(CLI::App& app, LogOptions& options) {
    app.add_flag("-v,--verbose", options.verbose, "More detail on stderr (-vv for trace)");
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
