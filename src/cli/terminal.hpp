#pragma once
// What cudaconv does where stdout or stderr is a terminal. Each decision is
// a pure function of whether they are (and of the options), so the tests
// can make it without one; stdout_is_terminal() asks the real descriptor.
#include <string>

namespace cudaconv {

bool stdout_is_terminal();

// -o - with stdout a terminal: an image's bytes would garble the screen
// (and may leave the terminal in a strange mode), so the run is refused
// before any work, as gzip refuses to write compressed data there. Throws
// UsageError (exit 2) then; returns otherwise.
void refuse_image_data_to_terminal(const std::string& output, bool stdout_is_terminal);

}  // namespace cudaconv
