#include "support/json_lines.hpp"

#include <sstream>

namespace cudaconv::test {

std::map<std::string, nlohmann::json> json_by_input(const std::string& out) {
    std::map<std::string, nlohmann::json> lines;
    std::istringstream text(out);
    std::string line;
    while (std::getline(text, line)) {
        const auto j = nlohmann::json::parse(line);
        if (!j.contains("summary")) lines[j["input"]] = j;
    }
    return lines;
}

nlohmann::json summary_of(const std::string& out) {
    std::istringstream lines(out);
    for (std::string line; std::getline(lines, line);) {
        const auto j = nlohmann::json::parse(line);
        if (j.value("summary", false)) return j;
    }
    return {};
}

}  // namespace cudaconv::test
