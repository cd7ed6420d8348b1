#pragma once
// Logs go to stderr as "cudaconv: LEVEL: message", one line each: the
// message's control characters are escaped (base/printable.hpp), so none
// can end the line or reach the terminal.
#include <string>

#include <CLI/CLI.hpp>

namespace cudaconv {

struct LogOptions {
    int verbose = 0;  // -v: debug, -vv: trace
    bool quiet = false;
    std::string level;  // --log-level overrides both
};

// Whether the level names are coloured: on a terminal, unless the
// environment's NO_COLOR is set to anything but "" (no-color.org).
bool log_colour_wanted(bool stderr_is_terminal, const char* no_color);

void add_log_options(CLI::App& app, LogOptions& options);
void init_logging();                          // before parsing: defaults
void apply_log_options(const LogOptions& o);  // after parsing

}  // namespace cudaconv
