#pragma once
// Text for an 80-column terminal: a line too long is broken at spaces, its
// continuation lines indented under where its text began (a hanging
// indent), as `cudaconv list` prints a name and then its description.
#include <string>
#include <string_view>

namespace cudaconv {

// The width that listings keep to: the classic terminal's.
constexpr int kTerminalColumns = 80;

// `lead` (a name and the spaces that pad its column), then `text`'s words,
// broken into lines of at most `width` columns; each continuation line
// starts with `indent` spaces (indent < width). A word wider than a line
// is cut where the line ends, so that no line is wider than `width` (past
// a lead that is wider already). Columns are UTF-8 characters. No newline
// at the end.
std::string wrap_hanging(std::string_view lead, std::string_view text, int indent,
                         int width = kTerminalColumns);

}  // namespace cudaconv
