#pragma once
// What cudaconv does where stdout or stderr is a terminal. Each decision is
// a pure function of whether they are (and of the options), so the tests
// can make it without one; stdout_is_terminal() asks the real descriptor.
#include <cstddef>
#include <string>

namespace cudaconv {

bool stdout_is_terminal();

// -o - with stdout a terminal: an image's bytes would garble the screen
// (and may leave the terminal in a strange mode), so the run is refused
// before any work, as gzip refuses to write compressed data there. Throws
// UsageError (exit 2) then; returns otherwise.
void refuse_image_data_to_terminal(const std::string& output, bool stdout_is_terminal);

// What decides whether a batch draws its progress line on stderr.
struct ProgressBarCase {
    bool stderr_is_terminal = false;
    bool stdout_is_terminal = false;
    bool json_to_stdout = false;  // --json -
    bool quiet = false;           // the log level hides info lines (-q)
    std::size_t images = 0;       // to process, skipped ones left out
};

// On a terminal, for more than one image, unless -q. Not where --json -
// writes its lines to a terminal too: the line redrawn in place on stderr
// would splice itself into them on the screen.
bool progress_bar_wanted(const ProgressBarCase& c);

}  // namespace cudaconv
