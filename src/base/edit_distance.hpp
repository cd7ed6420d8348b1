#pragma once
// Levenshtein distance: the edits (insert, delete, replace one character)
// that turn one word into another. For "did you mean" suggestions.
#include <cstddef>
#include <string_view>

namespace cudaconv {

std::size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace cudaconv
