#pragma once
// Runs the built cudaconv binary as a user would, capturing what it prints.
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "support/source_dir.hpp"

namespace cudaconv::test {

struct CommandResult {
    int exit_code = -1;  // 128 + signal number when killed by a signal
    std::string out;
    std::string err;
    long peak_rss_kb = 0;  // the command's peak resident memory (with any children it waited for)
};

// Runs `cudaconv args...` in `cwd`, feeding `stdin_data` to its stdin.
CommandResult run_cudaconv(const std::vector<std::string>& args,
                           const std::filesystem::path& cwd = std::filesystem::current_path(),
                           const std::string& stdin_data = {});

// Runs any program (looked up on PATH) the same way, with extra
// environment variables set for it alone.
CommandResult run_program(const std::vector<std::string>& command, const std::filesystem::path& cwd,
                          const std::string& stdin_data = {},
                          const std::vector<std::pair<std::string, std::string>>& env = {});

// The binary under test (CUDACONV_BINARY overrides the built one).
std::string cudaconv_binary();

// A fresh empty folder, removed when the object goes.
class TempDir {
public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::filesystem::path& path() const { return path_; }
    std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
    // The names of the files in it, sorted (to check nothing partial is left).
    std::vector<std::string> entries() const;

private:
    std::filesystem::path path_;
};

}  // namespace cudaconv::test
