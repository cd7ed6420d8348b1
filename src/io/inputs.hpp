#pragma once
// What a batch reads: the command line's inputs expanded into image files.
// Files stay as given; folders give the image files in them (-r: in every
// subfolder too); a pattern the shell did not expand ('*.jpg' quoted, or
// no match in the shell) is matched here; --from FILE|- adds one path a
// line. Each file keeps the folder it lies in relative to the folder its
// argument named ({dir} in output templates), so trees can be mirrored.
#include <cstddef>
#include <string>
#include <vector>

namespace cudaconv {

// The most images one run takes, from arguments, folders and --from lists
// together (and `compare` from one folder): far past any real batch, while
// that many paths still fit in memory.
constexpr std::size_t kMaxInputFiles = 10'000'000;

struct InputFile {
    std::string path;  // as found: "photos/2024/a.jpg", or "-" for stdin
    std::string dir;   // relative to its argument's root: "2024", or ""
    // The path relative to its argument's root, what --shard hashes:
    // "2024/a.jpg" for a file found in a folder or by a pattern; a file
    // named by an argument or a --from line keeps the path as given
    // (lexically normalised: "./a.jpg" is "a.jpg").
    std::string relative;
};

struct InputRequest {
    std::vector<std::string> args;  // the positional inputs
    bool recursive = false;         // -r
    std::string from;               // --from FILE or - ("" = none)
    // --from-root DIR: the folder the list's paths lie under, which they
    // keep their folders relative to ({dir}, the --shard key) as a folder
    // argument's files do ("" = none: a listed file is named by itself).
    std::string from_root;
    // The bound on a list's paths, a folder's images and all the images;
    // kMaxInputFiles but where a test asks for less.
    std::size_t max_files = kMaxInputFiles;
};

// In argument order; a folder's files sorted by path. A file reached twice
// (named, and inside a named folder) is read once, from its first mention.
// Throws UsageError for a pattern that matches nothing, an unreadable
// --from list or one that is not a list of paths (a NUL byte, a line
// longer than a path can be), more than max_files paths or images, a listed
// path outside --from-root, or a request that yields no input at all. A named file that does not exist
// is kept: reading it fails like any other bad input.
std::vector<InputFile> expand_inputs(const InputRequest& request);

// Whether an argument holds glob characters (* ? [).
bool has_glob_characters(const std::string& arg);

}  // namespace cudaconv
