#pragma once
// CLI11's usage errors said the way cudaconv says its own: an unknown
// option named as it was typed, with the option it most likely meant
// ("-quality" -> "unknown option -quality (did you mean --jpeg-quality?)"),
// a value that no argument takes named whole (`unexpected argument "x"`),
// and a missing -o after what looks like an output file name
// (`cudaconv in.jpg out.png -f edge`).
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace cudaconv {

// The long option of `app` most likely meant by `word` (dashes stripped,
// any case): one of that name; one that has it in its name, the shortest
// ("quality" -> "jpeg-quality"); or one whose name, or a part of it
// between dashes, is a typo or two away ("qualty"). "" where none.
std::string closest_option(const CLI::App& app, const std::string& word);

// The one line to print for `e`, raised parsing `args` (the command's
// arguments, without the program and command names).
std::string parse_error_message(const CLI::App& app, const CLI::ParseError& e,
                                const std::vector<std::string>& args);

}  // namespace cudaconv
