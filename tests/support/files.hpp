#pragma once
// Files the CLI tests read, write and compare.
#include <filesystem>
#include <string>

namespace cudaconv::test {

// images/NAME in the repository.
std::string sample(const std::string& name);
std::string read_bytes(const std::filesystem::path& p);
// Writes bytes to p, creating its folders.
void write_file(const std::filesystem::path& p, const std::string& bytes);
// Copies images/NAME to `to`, creating its folders; replaces a file there.
void copy_sample(const std::string& name, const std::filesystem::path& to);

}  // namespace cudaconv::test
