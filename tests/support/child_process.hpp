#pragma once
// cudaconv in a child process the test can watch, stop, signal and wait
// for, under resource limits and with signals set up as a shell leaves
// them: for the tests of signals, limits and hostile images, which need
// the process itself (its pid, its CPU time and peak memory), not only
// what it printed.
#include <sys/resource.h>
#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

namespace cudaconv::test {

struct Limit {
    int resource;     // RLIMIT_*
    rlim_t value;     // the soft limit, and the hard one unless `hard` is given
    rlim_t hard = 0;  // 0: `value`, as `ulimit` sets both; RLIM_INFINITY: none
};

struct ChildSetup {
    std::vector<Limit> limits;
    std::vector<std::string> environment;  // NAME=VALUE, added to this process's
    int stdout_fd = -1;                    // else /dev/null
    std::vector<int> ignored;              // signals it starts with ignored, as nohup leaves SIGHUP
    std::vector<int> closed;               // descriptors it starts without, as `>&-` leaves 1
    bool environment_only = false;         // `environment` alone, as `env -i` leaves it
    // Where the tests run as root: the child without root's override of
    // file permissions (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH), so that a
    // read-only folder is read-only to it. It exits 126 where they cannot
    // be dropped.
    bool without_permission_override = false;
    int stdin_fd = -1;  // else this process's stdin
};

// How the child ended, and what it took.
struct ChildExit {
    int status = 0;        // the wait status (WIFEXITED, WTERMSIG, ...)
    int exit_code = -1;    // as a shell says it: 128 + the signal's number when one ended it
    std::string err;       // what it wrote on stderr
    double cpu_s = 0;      // user + system
    long peak_rss_kb = 0;  // ru_maxrss
};

// cudaconv with `args` in `dir`: stderr to dir/stderr.txt, stdout to
// /dev/null (or setup.stdout_fd), no core dump, every signal the tests use
// at its default action and none blocked. Killed and reaped at the end
// whatever happens, so a failed REQUIRE leaves nothing running.
class Child {
public:
    Child(const std::vector<std::string>& args, const std::filesystem::path& dir,
          const ChildSetup& setup = {});
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;
    ~Child();

    pid_t pid() const { return pid_; }
    void signal(int number);
    // SIGSTOP, and back once it has stopped.
    void stop();
    // Not ended yet; leaves it to wait() to reap.
    bool running() const;
    // Ended, and reaped: wait() then returns at once.
    bool exited();
    // Waits (2 minutes at most) for the child to end.
    ChildExit wait();
    std::string err() const;

private:
    std::filesystem::path err_path_;
    pid_t pid_ = -1;
    bool reaped_ = false;
    int status_ = 0;
    rusage usage_{};
};

}  // namespace cudaconv::test
