#pragma once
// Where each input's output goes: -o names a file, a folder (ends in / or
// exists), a template with {stem} {ext} {filter} {kernel} {dir}, or -
// (stdout). A folder mirrors the inputs' trees: DIR/{dir}/{stem}.{ext}.
// A layer's run (--weights) knows {channel} too: one image a channel.
#include <string>
#include <utility>

namespace cudaconv {

struct OutputRequest {
    std::string output;  // the -o argument
    std::string format;  // --format: stdout's, and stdin's {ext} ("" = input's, else png)
    std::string filter;  // the filter's label, for {filter}
    std::string kernel;  // the variant's name, for {kernel}
    bool several_inputs = false;
    // A layer's output channel, for {channel} (cli/layer_command.cpp);
    // empty: {channel} is not a field of this run.
    std::string channel;
};

// One input: its path and, for {dir}, its folder relative to the folder
// (or pattern root) the command line named; "" for a file named directly.
struct OutputSource {
    OutputSource(std::string input_path, std::string input_dir = {})  // NOLINT: a path converts
        : input(std::move(input_path)), dir(std::move(input_dir)) {}
    OutputSource(const char* input_path) : input(input_path) {}  // NOLINT: a path converts
    std::string input;
    std::string dir;
};

struct OutputTarget {
    std::string path;       // "-" for stdout
    std::string extension;  // ".png": decides the encoder
};

// A template is filled in component by component: one that comes out
// empty (an empty {dir}) is dropped, so that it names the root, never "/";
// then the path is lexically normalised. Throws UsageError for a template
// field it does not know, for one file or stdout named as the output of
// several inputs, and for a template or folder output that would land
// outside its root (a {dir} or {stem} holding "..").
OutputTarget resolve_output(const OutputRequest& request, const OutputSource& source);

// The folder a template's outputs must stay in: what its literal text
// before the first '{' names, up to its last '/' ("out" for
// "out/{dir}/{stem}.png", "../res" for "../res/x-{stem}.png", "." when
// there is no '/', "/" for "/{stem}.png").
std::string template_root(const std::string& pattern);

// Whether --format decides anything for this input's output: stdout's
// format, or the {ext} (a folder output's extension) of an input that has
// none, such as stdin.
bool format_applies(const OutputRequest& request, const OutputSource& source);

// What stops `folder` from being created: the first of it and the folders
// above it that exists but is not a folder ("a.png" for "a.png/x" when
// a.png is a file), or "".
std::string file_in_the_way(const std::string& folder);

// The text for {filter}: the label with anything but letters, digits, '.',
// '_', '-' and '+' (a chain's steps) replaced by '-', so a spec like gaussian:sigma=2 is a safe
// file name part.
std::string file_name_safe(const std::string& text);

}  // namespace cudaconv
