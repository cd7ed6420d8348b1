#pragma once
// Names the user may type in any case (-k's variants, as -f's filters):
// the registry spells them in lower case, and the option's value is
// lowered as CLI11 reads it (Option::transform).
#include <cctype>
#include <string>

namespace cudaconv {

inline std::string ascii_lower(std::string text) {
    for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return text;
}

}  // namespace cudaconv
