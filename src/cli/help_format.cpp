#include "cli/help_format.hpp"

#include <sstream>
#include <string>

#include "base/wrap.hpp"

namespace cudaconv {

std::string WrappedHelp::make_option(const CLI::Option* opt, bool is_positional) const {
    const std::string name = "  " + make_option_name(opt, is_positional) + make_option_opts(opt);
    const std::string description = make_option_desc(opt);
    if (description.empty()) return name + "\n";
    const int column = static_cast<int>(get_column_width());
    // A name too wide for its column gets a line of its own, as CLI11 does.
    std::string out;
    std::string lead = name;
    if (static_cast<int>(name.size()) >= column) {
        out = name + "\n";
        lead.clear();
    }
    lead.resize(static_cast<std::size_t>(column), ' ');
    // Each of the description's own lines wrapped apart.
    std::istringstream paragraphs(description);
    for (std::string paragraph; std::getline(paragraphs, paragraph);) {
        out += wrap_hanging(lead, paragraph, column) + "\n";
        lead.assign(static_cast<std::size_t>(column), ' ');
    }
    return out;
}

void use_wrapped_help(CLI::App& app) { app.formatter(std::make_shared<WrappedHelp>()); }

}  // namespace cudaconv
