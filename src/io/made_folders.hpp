#pragma once
// The folders a run makes for its outputs (-o DIR/, a template's folders,
// compare's --diff folder), each level it made, so that a run that wrote
// nothing into them (every input failed, a stop before the first write)
// takes them away at its end: a failed run leaves no empty folders behind.
#include <string>
#include <system_error>

namespace cudaconv {

// Makes `folder` and each missing folder above it, as
// std::filesystem::create_directories does, noting each one it made. Safe
// from any thread.
void make_folders(const std::string& folder, std::error_code& ec);

// Removes the folders noted that are empty, innermost first: one that
// holds anything (an output, a file or folder the run did not make) stays.
void remove_empty_made_folders();

}  // namespace cudaconv
