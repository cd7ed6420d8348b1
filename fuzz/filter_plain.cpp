// Fuzz target: parse_plain_matrix (filters/file_formats.hpp), the format of
// every filter file but *.mat, on any bytes as read from a file: a filter
// the variants can take, or a FilterError of one line that starts with the
// file's name; nothing else.
#include <cstddef>
#include <cstdint>

#include "filter_checks.hpp"
#include "filters/file_formats.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    cudaconv::fuzz::check_file_parser(cudaconv::parse_plain_matrix, "k.txt", data, size);
    return 0;
}
