#pragma once
// --help for an 80-column terminal: CLI11 prints each option's description
// on one line however long; this formatter breaks it at spaces, continuation
// lines under the description's column (base/wrap.hpp), as `list` does.
#include <memory>

#include <CLI/CLI.hpp>

namespace cudaconv {

class WrappedHelp : public CLI::Formatter {
public:
    std::string make_option(const CLI::Option* opt, bool is_positional) const override;
};

// Gives `app` (and the subcommands it adds later) the wrapped help.
void use_wrapped_help(CLI::App& app);

}  // namespace cudaconv
