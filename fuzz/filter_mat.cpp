// Fuzz target: parse_libvips_matrix (filters/file_formats.hpp), the format
// of *.mat filter files, on any bytes as read from a file: a filter the
// variants can take, or a FilterError of one line that starts with the
// file's name; nothing else.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "filter_checks.hpp"
#include "filters/file_formats.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string name = "k.mat";
    try {
        cudaconv::fuzz::check_filter(cudaconv::parse_libvips_matrix(
            std::string_view(reinterpret_cast<const char*>(data), size), name));
    } catch (const cudaconv::FilterError& e) {
        const std::string message = e.what();
        cudaconv::fuzz::check_message(message);
        FUZZ_CHECK(message.rfind(name, 0) == 0, "the message does not name the file: %s",
                   message.c_str());
    }
    return 0;
}
