#include "cli/number_options.hpp"

#include <limits>
#include <string>

#include <fmt/format.h>

#include "filters/numbers.hpp"

namespace cudaconv {
namespace {

// "" for a good value, else the problem; CLI11 puts the option's name
// before it.
CLI::Validator integer_check(const std::string& description, long long min, long long max,
                             const std::string& outside) {
    return CLI::Validator(
        [min, max, outside](std::string& text) -> std::string {
            long long value = 0;
            std::string problem;
            if (!parse_integer(text, value, problem)) return problem;
            if (value < min || value > max) return text + outside;
            return "";
        },
        description);
}

CLI::Validator float_check(const std::string& description, bool non_negative) {
    return CLI::Validator(
        [non_negative](std::string& text) -> std::string {
            double value = 0.0;
            std::string problem;
            if (!parse_finite_number(text, value, problem)) return problem;
            if (non_negative && value < 0.0) return text + " is negative";
            return "";
        },
        description);
}

}  // namespace

CLI::Validator integer_from(long long min, long long max) {
    return integer_check(fmt::format("INT in [{} - {}]", min, max), min, max,
                         fmt::format(" is not from {} to {}", min, max));
}

CLI::Validator positive_integer() {
    return integer_check("POSITIVE", 1, std::numeric_limits<long long>::max(),
                         " is not a positive number");
}

CLI::Validator non_negative_integer() {
    return integer_check("NONNEGATIVE", 0, std::numeric_limits<long long>::max(), " is negative");
}

CLI::Validator finite_number() { return float_check("FINITE", false); }

CLI::Validator finite_non_negative() { return float_check("NONNEGATIVE", true); }

}  // namespace cudaconv
