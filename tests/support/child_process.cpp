#include "support/child_process.hpp"

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <linux/capability.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "support/files.hpp"
#include "support/run_command.hpp"

namespace cudaconv::test {
namespace {

// Every signal the tests send or provoke, at its default action in the
// child whatever the test process was started with, as from a shell.
constexpr int kSignalsUsed[] = {SIGINT,  SIGTERM,   SIGHUP,  SIGQUIT, SIGUSR1, SIGUSR2,
                                SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU, SIGABRT, SIGSEGV,
                                SIGBUS,  SIGFPE,    SIGILL,  SIGXFSZ, SIGPIPE};

}  // namespace

Child::Child(const std::vector<std::string>& args, const std::filesystem::path& dir,
             const ChildSetup& setup)
    : err_path_(dir / "stderr.txt") {
    std::vector<std::string> argv_storage{cudaconv_binary()};
    argv_storage.insert(argv_storage.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : argv_storage) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env_storage(setup.environment);
    for (char** e = environ; *e != nullptr && !setup.environment_only; ++e) {
        env_storage.emplace_back(*e);
    }
    std::vector<char*> envp;
    for (std::string& e : env_storage) envp.push_back(e.data());
    envp.push_back(nullptr);
    const std::string err = err_path_.string();
    pid_ = fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {  // only async-signal-safe calls until exec
        const rlimit no_core{0, 0};
        if (setrlimit(RLIMIT_CORE, &no_core) != 0) _exit(127);
        for (const Limit& limit : setup.limits) {
            const rlimit value{limit.value, limit.hard != 0 ? limit.hard : limit.value};
            if (setrlimit(limit.resource, &value) != 0) _exit(127);
        }
        if (setup.without_permission_override && geteuid() == 0 &&
            (prctl(PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, 0, 0, 0) != 0 ||
             prctl(PR_CAPBSET_DROP, CAP_DAC_READ_SEARCH, 0, 0, 0) != 0)) {
            _exit(126);
        }
        for (const int s : kSignalsUsed) ::signal(s, SIG_DFL);
        for (const int s : setup.ignored) ::signal(s, SIG_IGN);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        const int err_fd = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int out_fd = setup.stdout_fd >= 0 ? setup.stdout_fd : open("/dev/null", O_WRONLY);
        if (err_fd < 0 || out_fd < 0 || chdir(dir.c_str()) != 0 || dup2(err_fd, 2) < 0 ||
            dup2(out_fd, 1) < 0) {
            _exit(127);
        }
        if (setup.stdin_fd >= 0 && dup2(setup.stdin_fd, 0) < 0) _exit(127);
        for (const int fd : setup.closed) close(fd);
        execve(argv[0], argv.data(), envp.data());
        _exit(127);
    }
}

Child::~Child() {
    if (pid_ > 0 && !reaped_) {
        kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
    }
}

void Child::signal(int number) { REQUIRE(kill(pid_, number) == 0); }

void Child::stop() {
    signal(SIGSTOP);
    int status = 0;
    REQUIRE(wait4(pid_, &status, WUNTRACED, &usage_) == pid_);
    if (!WIFSTOPPED(status)) {
        reaped_ = true;
        status_ = status;
        FAIL("cudaconv ended before it stopped: " << err());
    }
}

bool Child::running() const {
    if (reaped_) return false;
    siginfo_t info{};
    return waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
           info.si_pid == 0;
}

bool Child::exited() {
    if (!reaped_ && wait4(pid_, &status_, WNOHANG, &usage_) == pid_) reaped_ = true;
    return reaped_;
}

ChildExit Child::wait() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
    while (!exited()) {
        REQUIRE(std::chrono::steady_clock::now() < deadline);
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ChildExit result;
    result.status = status_;
    result.exit_code = WIFEXITED(status_) ? WEXITSTATUS(status_) : 128 + WTERMSIG(status_);
    result.err = err();
    result.cpu_s = static_cast<double>(usage_.ru_utime.tv_sec + usage_.ru_stime.tv_sec) +
                   static_cast<double>(usage_.ru_utime.tv_usec + usage_.ru_stime.tv_usec) / 1e6;
    result.peak_rss_kb = usage_.ru_maxrss;
    return result;
}

std::string Child::err() const { return read_bytes(err_path_); }

}  // namespace cudaconv::test
