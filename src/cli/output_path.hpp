#pragma once
// Where each input's output goes: -o names a file, a folder (ends in / or
// exists), a template with {stem} {ext} {filter} {kernel}, or - (stdout).
#include <string>

namespace cudaconv {

struct OutputRequest {
    std::string output;      // the -o argument
    std::string format;      // --format, for stdout ("" = input's, else png)
    std::string filter;      // the filter's label, for {filter}
    std::string kernel;      // the variant's name, for {kernel}
    bool several_inputs = false;
};

struct OutputTarget {
    std::string path;       // "-" for stdout
    std::string extension;  // ".png": decides the encoder
};

// Throws UsageError for a template field it does not know, or for one file
// or stdout named as the output of several inputs.
OutputTarget resolve_output(const OutputRequest& request, const std::string& input);

// The text for {filter}: the label with anything but letters, digits, '.',
// '_' and '-' replaced by '-', so a spec like gaussian:sigma=2 is a safe
// file name part.
std::string file_name_safe(const std::string& text);

}  // namespace cudaconv
