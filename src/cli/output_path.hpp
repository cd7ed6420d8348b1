#pragma once
// Where each input's output goes: -o names a file, a folder (ends in / or
// exists), a template with {stem} {ext} {filter} {kernel} {dir}, or -
// (stdout). A folder mirrors the inputs' trees: DIR/{dir}/{stem}.{ext}.
#include <string>
#include <utility>

namespace cudaconv {

struct OutputRequest {
    std::string output;      // the -o argument
    std::string format;      // --format, for stdout ("" = input's, else png)
    std::string filter;      // the filter's label, for {filter}
    std::string kernel;      // the variant's name, for {kernel}
    bool several_inputs = false;
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

// Throws UsageError for a template field it does not know, or for one file
// or stdout named as the output of several inputs.
OutputTarget resolve_output(const OutputRequest& request, const OutputSource& source);

// The text for {filter}: the label with anything but letters, digits, '.',
// '_' and '-' replaced by '-', so a spec like gaussian:sigma=2 is a safe
// file name part.
std::string file_name_safe(const std::string& text);

}  // namespace cudaconv
