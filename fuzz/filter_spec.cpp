// Fuzz target: parse_filter_spec (filters/spec.hpp) on any text, as `-f`
// gets it: named filters and their arguments, inline matrices, and the
// choice between those and a file. A spec is accepted as a filter the
// variants can take, or refused with a FilterError, of one line where the
// spec is; nothing else. Specs naming a file (`@...`, or a path that exists) are left out:
// the file formats have targets of their own, and a fuzzer must not read
// what the machine holds. Nor does argv hold a NUL, so neither does a spec.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <system_error>

#include "filter_checks.hpp"
#include "filters/spec.hpp"

namespace {

bool names_a_file(const std::string& spec) {
    if (spec.empty()) return false;
    if (spec[0] == '@' || spec.find('\0') != std::string::npos) return true;
    std::error_code ec;
    return std::filesystem::exists(std::filesystem::status(spec, ec));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string spec(reinterpret_cast<const char*>(data), size);
    if (names_a_file(spec)) return 0;
    try {
        cudaconv::fuzz::check_filter(cudaconv::parse_filter_spec(spec));
    } catch (const cudaconv::FilterError& e) {
        // Messages quote the spec as given: a line break in it stays there.
        if (spec.find_first_of("\r\n") == std::string::npos) {
            cudaconv::fuzz::check_message(e.what());
        }
    }
    return 0;
}
