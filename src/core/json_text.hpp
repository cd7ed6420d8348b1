#pragma once
// JSON as cudaconv writes it (--json lines, bench and compare reports).
// A path may hold bytes that are not UTF-8, which JSON cannot carry:
// nlohmann's dump() would throw on them; here each becomes U+FFFD, so a
// report is always written, and always valid JSON.
#include <string>

#include <nlohmann/json.hpp>

namespace cudaconv {

template <typename Json>  // nlohmann::json or nlohmann::ordered_json
std::string json_text(const Json& value, int indent = -1) {
    return value.dump(indent, ' ', false, Json::error_handler_t::replace);
}

inline std::string json_text(const nlohmann::json& value) {
    return json_text<nlohmann::json>(value);
}

}  // namespace cudaconv
