#pragma once
// What a batch reads: the command line's inputs expanded into image files.
// Files stay as given; folders give the image files in them (-r: in every
// subfolder too); a pattern the shell did not expand ('*.jpg' quoted, or
// no match in the shell) is matched here; --from FILE|- adds one path a
// line. Each file keeps the folder it lies in relative to the folder its
// argument named ({dir} in output templates), so trees can be mirrored.
#include <string>
#include <vector>

namespace cudaconv {

struct InputFile {
    std::string path;  // as found: "photos/2024/a.jpg", or "-" for stdin
    std::string dir;   // relative to its argument's root: "2024", or ""
};

struct InputRequest {
    std::vector<std::string> args;  // the positional inputs
    bool recursive = false;         // -r
    std::string from;               // --from FILE or - ("" = none)
};

// In argument order; a folder's files sorted by path. A file reached twice
// (named, and inside a named folder) is read once, from its first mention.
// Throws UsageError for a pattern that matches nothing, an unreadable
// --from list, or a request that yields no input at all. A named file that
// does not exist is kept: reading it fails like any other bad input.
std::vector<InputFile> expand_inputs(const InputRequest& request);

// Whether an argument holds glob characters (* ? [).
bool has_glob_characters(const std::string& arg);

}  // namespace cudaconv
