#pragma once
// User text (a filter spec, a path, a line of a list) made safe to echo in
// a message: a spec or a file name must not be able to move the cursor,
// recolour the terminal, or end the line and fake another log line.
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace cudaconv {

// `text` with every control character (C0, DEL and the C1 range, which
// terminals also obey) and every byte that is not part of valid UTF-8
// written as \xNN; everything else, printable UTF-8 included, as it is.
// Past `max_chars` characters (an escape counts as its four) it is cut
// and "..." added.
std::string printable(std::string_view text, std::size_t max_chars = std::string_view::npos);

// Specs echoed in messages are cut to about this many characters: enough
// to recognise one, and a pasted page stays one line.
constexpr std::size_t kMaxEchoedSpecChars = 80;

// printable(spec, kMaxEchoedSpecChars): how every message echoes a spec.
std::string printable_spec(std::string_view spec);

// "PATH: problem" (or "PATH -> PATH2: problem"), as every message names a
// file, instead of the library's "filesystem error: ..." text.
std::string describe(const std::filesystem::filesystem_error& e);

}  // namespace cudaconv
