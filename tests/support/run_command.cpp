#include "support/run_command.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace cudaconv::test {
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace

// Compiled-in paths, which the environment may override: on the GPU
// machine the binaries run from another folder than they were built in.
std::string cudaconv_binary() {
    const char* env = std::getenv("CUDACONV_BINARY");
    return env ? env : CUDACONV_BINARY;
}

CommandResult run_cudaconv(const std::vector<std::string>& args, const fs::path& cwd,
                           const std::string& stdin_data) {
    std::vector<std::string> command{cudaconv_binary()};
    command.insert(command.end(), args.begin(), args.end());
    return run_program(command, cwd, stdin_data);
}

CommandResult run_program(const std::vector<std::string>& command, const fs::path& cwd,
                          const std::string& stdin_data,
                          const std::vector<std::pair<std::string, std::string>>& env) {
    // Capture through files rather than pipes: no deadlock however much
    // either stream prints.
    TempDir io;
    const fs::path in_path = io / "stdin", out_path = io / "stdout", err_path = io / "stderr";
    std::ofstream(in_path, std::ios::binary) << stdin_data;

    std::vector<std::string> argv_storage = command;
    std::vector<char*> argv;
    for (auto& a : argv_storage) argv.push_back(a.data());
    argv.push_back(nullptr);

    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
        const int in_fd = open(in_path.c_str(), O_RDONLY);
        const int out_fd = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int err_fd = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (in_fd < 0 || out_fd < 0 || err_fd < 0 || chdir(cwd.c_str()) != 0) _exit(127);
        dup2(in_fd, 0);
        dup2(out_fd, 1);
        dup2(err_fd, 2);
        for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
        execvp(argv[0], argv.data());
        _exit(127);
    }
    int status = 0;
    rusage usage{};
    wait4(pid, &status, 0, &usage);
    CommandResult result;
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    result.peak_rss_kb = usage.ru_maxrss;
    result.out = slurp(out_path);
    result.err = slurp(err_path);
    return result;
}

TempDir::TempDir() {
    std::string pattern = (fs::temp_directory_path() / "cudaconv-test-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
}

TempDir::~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
}

std::vector<std::string> TempDir::entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(path_)) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names;
}

}  // namespace cudaconv::test
