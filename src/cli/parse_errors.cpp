#include "cli/parse_errors.hpp"

#include <algorithm>
#include <filesystem>
#include <string_view>

#include <fmt/format.h>

#include "base/edit_distance.hpp"
#include "base/printable.hpp"
#include "cli/case_insensitive.hpp"
#include "io/image_io.hpp"

namespace cudaconv {
namespace {

// The argument the user typed that CLI11 reports as `extra`: CLI11 reads
// "-quality" as the flag -q and then reports "-uality", so the argument is
// the one that ends with what it reports.
std::string typed_as(const std::string& extra, const std::vector<std::string>& args) {
    const std::string_view tail = std::string_view(extra).substr(extra[0] == '-' ? 1 : 0);
    for (const std::string& arg : args) {
        if (arg.size() >= tail.size() + 1 && arg[0] == '-' &&
            std::string_view(arg).substr(arg.size() - tail.size()) == tail) {
            return arg;
        }
    }
    return extra;
}

std::string suggestion(const CLI::App& app, const std::string& word) {
    const std::string meant = closest_option(app, word);
    return meant.empty() ? "" : fmt::format(" (did you mean --{}?)", meant);
}

// "The following argument(s) was/were not expected: a b" -> {a, b}.
std::vector<std::string> extras_of(const CLI::ParseError& e) {
    const std::string what = e.what();
    const std::size_t colon = what.find(": ");
    std::vector<std::string> extras;
    if (colon == std::string::npos) return extras;
    std::string_view rest = std::string_view(what).substr(colon + 2);
    while (!rest.empty()) {
        const std::size_t space = rest.find(' ');
        if (space != 0) extras.emplace_back(rest.substr(0, space));
        if (space == std::string_view::npos) break;
        rest.remove_prefix(space + 1);
    }
    return extras;
}

// `cudaconv in.jpg out.png -f edge`: the last input names no file but an
// image format, so it was most likely meant as the output.
std::string missing_output_hint(const CLI::App& app) {
    const CLI::Option* inputs = app.get_option_no_throw("inputs");
    if (inputs == nullptr || inputs->results().size() < 2) return "";
    const std::string& last = inputs->results().back();
    std::error_code ec;
    if (std::filesystem::exists(last, ec) || !is_image_extension(extension_of(last))) return "";
    return fmt::format(" ({} is not a file: did you mean -o {}?)", printable(last),
                       printable(last));
}

// Values no positional takes (`cudaconv list filters kernels`), the first
// named whole: CLI11's text joins them with spaces, which a value may hold.
std::string stray_values_message(const std::vector<std::string>& strays) {
    std::string message = fmt::format("unexpected argument \"{}\"", printable(strays.front()));
    if (strays.size() > 1) message += fmt::format(" (and {} more)", strays.size() - 1);
    return message;
}

}  // namespace

std::string closest_option(const CLI::App& app, const std::string& word) {
    constexpr std::size_t kMaxTypoEdits = 2;
    constexpr std::size_t kMinPart = 3;  // "ext" may stand for a part; "o" may not
    const std::string wanted = ascii_lower(word);
    if (wanted.empty()) return "";
    std::string part_match, typo_match;
    std::size_t best_distance = kMaxTypoEdits + 1;
    for (const CLI::Option* opt : app.get_options()) {
        for (const std::string& name : opt->get_lnames()) {
            if (name == wanted) return name;
            if (wanted.size() >= kMinPart && name.find(wanted) != std::string::npos &&
                (part_match.empty() || name.size() < part_match.size())) {
                part_match = name;
            }
            // A typo of the whole name, or of one of its parts ("qualty" is
            // one edit from jpeg-quality's "quality").
            std::size_t distance = edit_distance(wanted, name);
            for (std::size_t start = 0; start < name.size();) {
                const std::size_t end = std::min(name.find('-', start), name.size());
                distance =
                    std::min(distance, edit_distance(wanted, name.substr(start, end - start)));
                start = end + 1;
            }
            if (distance < best_distance && distance < wanted.size()) {
                best_distance = distance;
                typo_match = name;
            }
        }
    }
    return part_match.empty() ? typo_match : part_match;
}

std::string parse_error_message(const CLI::App& app, const CLI::ParseError& e,
                                const std::vector<std::string>& args) {
    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
        for (const std::string& extra : extras_of(e)) {
            if (extra.size() < 2 || extra[0] != '-') continue;  // a stray value: CLI11's words
            const std::string typed = typed_as(extra, args);
            const std::size_t dashes = typed.compare(0, 2, "--") == 0 ? 2 : 1;
            const std::string name = typed.substr(dashes, typed.find('=') - dashes);
            return fmt::format("unknown option {}{}", printable(typed), suggestion(app, name));
        }
        if (const std::vector<std::string> strays = app.remaining(); !strays.empty()) {
            return stray_values_message(strays);
        }
    }
    if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr &&
        std::string_view(e.what()).find("--output") != std::string_view::npos) {
        return e.what() + missing_output_hint(app);
    }
    return e.what();
}

}  // namespace cudaconv
