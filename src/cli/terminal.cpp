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

}  // namespace cudaconv
