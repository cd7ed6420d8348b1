#pragma once
// What a batch run printed with --json -: one JSON line an image, then a
// summary line.
#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace cudaconv::test {

// Each image's line by its "input" (the summary left out).
std::map<std::string, nlohmann::json> json_by_input(const std::string& out);

// The summary line; an empty object where there is none.
nlohmann::json summary_of(const std::string& out);

}  // namespace cudaconv::test
