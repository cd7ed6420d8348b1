#pragma once
// Filter files (docs/SPEC.md, "Filter specs"): the libvips matrix format for
// *.mat, the plain text format for anything else. Messages name the file as
// the user typed it, the line, and the problem: `k.txt:2: "abc" is not a
// number`.
#include <string>
#include <string_view>

#include "filters/filter.hpp"

namespace cudaconv {

// Generous for any filter kMaxFilterTaps allows (about 25 bytes a tap), and
// small enough that `-f movie.mp4` fails without reading gigabytes.
constexpr std::size_t kMaxFilterFileBytes = std::size_t{64} << 20;
// A row of kMaxFilterSide long numbers ("-1.2345678901234567e-300 ") is
// about 26 KB; a longer line is not a filter's row.
constexpr std::size_t kMaxFilterLineBytes = std::size_t{64} << 10;

// Reads `path` (a regular file, or a pipe such as `-f <(gen_taps)`) a line
// at a time, keeping only the taps; the label is the file's stem. Throws
// FilterError when it is missing, a directory, unreadable, empty, binary,
// too big, has a line longer than kMaxFilterLineBytes, or is malformed.
Filter read_filter_file(const std::string& path);

// True for a name ending in .mat, any case: those files are libvips
// matrices.
bool is_libvips_matrix_name(const std::string& path);

// The formats on text already in memory, read as read_filter_file reads a
// file; `name` starts every message, as it is.
// libvips: "W H [scale [offset]]", then H rows of W numbers; taps are
// value / scale and the offset becomes Filter::delta.
Filter parse_libvips_matrix(std::string_view text, const std::string& name);
// Plain: one row per line; spaces, tabs or commas between numbers; '#'
// starts a comment; blank lines are skipped; every row the same length.
Filter parse_plain_matrix(std::string_view text, const std::string& name);

}  // namespace cudaconv
