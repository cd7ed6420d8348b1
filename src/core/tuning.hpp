#pragma once
// Tuning parameters: the values a variant's measured rules choose for a job
// (band heights, tail rows, grid caps, ...), which `bench --param NAME=VALUE`
// and the tests may set instead. A variant lists the ones it reads
// (Backend::tuning_params); a value left unset keeps the rule's choice.
// Nothing else steers a variant: no environment variables, no macros.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudaconv {

// One parameter a variant reads: its name, what it sets, and its range.
struct TuningParam {
    std::string_view name;
    std::string_view meaning;
    int min = 0;
    int max = 0;
};

// The values given for a run, by name.
class Tuning {
public:
    Tuning() = default;
    Tuning(std::initializer_list<std::pair<const std::string, int>> values) : values_(values) {}

    void set(std::string name, int value) { values_[std::move(name)] = value; }
    std::optional<int> get(std::string_view name) const {
        const auto it = values_.find(name);
        if (it == values_.end()) return std::nullopt;
        return it->second;
    }
    bool empty() const { return values_.empty(); }
    const std::map<std::string, int, std::less<>>& values() const { return values_; }

private:
    std::map<std::string, int, std::less<>> values_;
};

// "NAME=VALUE" with an integer VALUE; throws std::invalid_argument with a
// message for the user when the text is not that.
std::pair<std::string, int> parse_tuning_param(std::string_view text);

// Why `tuning` cannot be given to `variant`, whose parameters are `params`:
// a name it does not read, or a value out of range. Empty when it can.
std::string tuning_refusal(const Tuning& tuning, const std::vector<TuningParam>& params,
                           std::string_view variant);

// The parameters of several variants together, each name once (the first
// description of a name wins): what a composite reads through its paths.
std::vector<TuningParam> merge_tuning_params(const std::vector<std::vector<TuningParam>>& lists);

}  // namespace cudaconv
