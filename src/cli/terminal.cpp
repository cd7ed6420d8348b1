#include "cli/terminal.hpp"

#include <unistd.h>

#include "base/errors.hpp"
#include "io/image_io.hpp"

namespace cudaconv {

bool stdout_is_terminal() { return ::isatty(STDOUT_FILENO) == 1; }

void refuse_image_data_to_terminal(const std::string& output, bool stdout_is_terminal) {
    if (output != kStdStream || !stdout_is_terminal) return;
    throw UsageError(
        "-o -: refusing to write image data to a terminal (redirect stdout, or give -o FILE)");
}

bool progress_bar_wanted(const ProgressBarCase& c) {
    if (!c.stderr_is_terminal || c.quiet || c.images < 2) return false;
    return !(c.json_to_stdout && c.stdout_is_terminal);
}

}  // namespace cudaconv
