#include "core/tuning.hpp"

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include <fmt/format.h>

#include "base/printable.hpp"

namespace cudaconv {

std::pair<std::string, int> parse_tuning_param(std::string_view text) {
    const std::size_t eq = text.find('=');
    if (eq == std::string_view::npos || eq == 0) {
        throw std::invalid_argument(fmt::format(
            "--param {}: expected NAME=VALUE (for example band_rows=8)", printable(text)));
    }
    const std::string_view name = text.substr(0, eq);
    const std::string_view value = text.substr(eq + 1);
    int number = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (value.empty() || error != std::errc{} || end != value.data() + value.size()) {
        throw std::invalid_argument(
            fmt::format("--param {}: the value must be an integer", printable(text)));
    }
    return {std::string(name), number};
}

std::string tuning_refusal(const Tuning& tuning, const std::vector<TuningParam>& params,
                           std::string_view variant) {
    for (const auto& [name, value] : tuning.values()) {
        const auto it = std::find_if(params.begin(), params.end(),
                                     [&](const TuningParam& p) { return p.name == name; });
        if (it == params.end()) {
            std::string known;
            for (const TuningParam& p : params)
                known += (known.empty() ? "" : ", ") + std::string(p.name);
            return fmt::format("{} has no parameter {} ({})", variant, printable(name),
                               known.empty() ? "it has none" : "it has " + known);
        }
        if (value < it->min || value > it->max) {
            return fmt::format("{}'s {} is {} to {}; {} was given", variant, name, it->min, it->max,
                               value);
        }
    }
    return {};
}

std::vector<TuningParam> merge_tuning_params(const std::vector<std::vector<TuningParam>>& lists) {
    std::vector<TuningParam> merged;
    for (const auto& list : lists) {
        for (const TuningParam& p : list) {
            const bool known = std::any_of(merged.begin(), merged.end(),
                                           [&](const TuningParam& m) { return m.name == p.name; });
            if (!known) merged.push_back(p);
        }
    }
    return merged;
}

}  // namespace cudaconv
