// No thread limit or resource limit leaves a file behind: cudaconv in a
// child process under setrlimit.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "support/files.hpp"
#include "support/run_command.hpp"
#include "support/sanitizers.hpp"

namespace cudaconv::test {
namespace fs = std::filesystem;

namespace {

// Every signal the tests send or provoke, at its default action in the
// child whatever the test process was started with, as from a shell.
constexpr int kSignalsUsed[] = {SIGINT,  SIGTERM,   SIGHUP,  SIGQUIT, SIGUSR1, SIGUSR2,
                                SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU, SIGABRT, SIGSEGV,
                                SIGBUS,  SIGFPE,    SIGILL,  SIGXFSZ, SIGPIPE};

struct Limit {
    int resource;  // RLIMIT_*
    rlim_t value;  // soft and hard
};

struct ChildSetup {
    std::vector<Limit> limits;
    int stdout_fd = -1;        // else /dev/null
    std::vector<int> ignored;  // signals it starts with ignored, as nohup leaves SIGHUP
};

// cudaconv in a child process, in `dir`: stderr to dir/stderr.txt, no core
// dump. Killed and reaped at the end whatever happens, so a failed REQUIRE
// leaves nothing running.
class Child {
public:
    Child(const std::vector<std::string>& args, const fs::path& dir, const ChildSetup& setup = {})
        : err_path_(dir / "stderr.txt") {
        std::vector<std::string> argv_storage{cudaconv_binary()};
        argv_storage.insert(argv_storage.end(), args.begin(), args.end());
        std::vector<char*> argv;
        for (std::string& a : argv_storage) argv.push_back(a.data());
        argv.push_back(nullptr);
        const std::string err = err_path_.string();
        pid_ = fork();
        REQUIRE(pid_ >= 0);
        if (pid_ == 0) {  // only async-signal-safe calls until exec
            const rlimit no_core{0, 0};
            if (setrlimit(RLIMIT_CORE, &no_core) != 0) _exit(127);
            for (const Limit& limit : setup.limits) {
                const rlimit value{limit.value, limit.value};
                if (setrlimit(limit.resource, &value) != 0) _exit(127);
            }
            for (const int s : kSignalsUsed) ::signal(s, SIG_DFL);
            for (const int s : setup.ignored) ::signal(s, SIG_IGN);
            sigset_t none;
            sigemptyset(&none);
            sigprocmask(SIG_SETMASK, &none, nullptr);
            const int err_fd = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            const int out_fd =
                setup.stdout_fd >= 0 ? setup.stdout_fd : open("/dev/null", O_WRONLY);
            if (err_fd < 0 || out_fd < 0 || chdir(dir.c_str()) != 0 || dup2(err_fd, 2) < 0 ||
                dup2(out_fd, 1) < 0) {
                _exit(127);
            }
            execv(argv[0], argv.data());
            _exit(127);
        }
    }
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;
    ~Child() {
        if (!reaped_) {
            kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
        }
    }

    void signal(int number) { REQUIRE(kill(pid_, number) == 0); }

    // SIGSTOP, and back once it has stopped.
    void stop() {
        signal(SIGSTOP);
        int status = 0;
        REQUIRE(waitpid(pid_, &status, WUNTRACED) == pid_);
        if (!WIFSTOPPED(status)) {
            reaped_ = true;
            FAIL("cudaconv ended before it stopped: " << read_bytes(err_path_));
        }
    }

    bool exited() {  // and reaped: wait() then gives its status
        if (!reaped_ && waitpid(pid_, &status_, WNOHANG) == pid_) reaped_ = true;
        return reaped_;
    }

    int wait() {  // the wait status
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (!exited()) {
            REQUIRE(std::chrono::steady_clock::now() < deadline);
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return status_;
    }

    std::string err() const { return read_bytes(err_path_); }

private:
    fs::path err_path_;
    pid_t pid_ = -1;
    bool reaped_ = false;
    int status_ = 0;
};

std::vector<std::string> entries(const fs::path& folder) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(folder)) names.push_back(e.path().filename());
    return names;
}

}  // namespace

// -j 1024 where the address space holds about a dozen thread stacks
// (ulimit -s 1 GB, ulimit -v 16 GB): fewer workers, a warning, the output.
TEST_CASE("where the system starts fewer threads, fewer workers run", "[cli][threads]") {
#if defined(CUDACONV_TEST_UNDER_SANITIZER)
    std::cout << "not run: an address space limit under a sanitizer\n";
    return;
#endif
    TempDir dir;
    fs::create_directory(dir / "out");
    const std::vector<std::string> args{sample("chelsea.png"), "-f", "edge", "-k", "cpu"};
    auto with = [&](std::vector<std::string> more) {
        more.insert(more.begin(), args.begin(), args.end());
        return more;
    };
    constexpr rlim_t kGiB = rlim_t{1} << 30;
    Child child(with({"-j", "1024", "-o", "out/edge.png"}), dir.path(),
                {{{RLIMIT_STACK, kGiB}, {RLIMIT_AS, 16 * kGiB}}});
    const int status = child.wait();
    const std::string err = child.err();
    INFO(err);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK_THAT(err, Catch::Contains("of the 1024 workers asked for (-j): the system would start only"));
    CHECK(entries(dir / "out") == std::vector<std::string>{"edge.png"});
    const CommandResult unlimited = run_cudaconv(with({"-o", "out/reference.png"}), dir.path());
    REQUIRE(unlimited.exit_code == 0);
    CHECK(read_bytes(dir / "out/edge.png") == read_bytes(dir / "out/reference.png"));
}

// Thread stacks larger than the address space (ulimit -s 64 GB, ulimit -v
// 16 GB): no thread starts at all, and the batch cannot run.
TEST_CASE("where the system starts no thread, the batch fails with one error line",
          "[cli][threads]") {
#if defined(CUDACONV_TEST_UNDER_SANITIZER)
    std::cout << "not run: an address space limit under a sanitizer\n";
    return;
#endif
    TempDir dir;
    fs::create_directory(dir / "out");
    constexpr rlim_t kGiB = rlim_t{1} << 30;
    Child child({sample("chelsea.png"), sample("camera.png"), "-f", "edge", "-k", "cpu", "-o",
                 "out/"},
                dir.path(), {{{RLIMIT_STACK, 64 * kGiB}, {RLIMIT_AS, 16 * kGiB}}});
    const int status = child.wait();
    const std::string err = child.err();
    INFO(err);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 1);
    CHECK_THAT(err, Catch::Contains("cudaconv: error: cannot start a thread: "));
    CHECK_THAT(err, Catch::Contains(" (the batch's GPU thread)\n"));
    CHECK(err.find("error:") == err.rfind("error:"));  // one error line
    CHECK(entries(dir / "out").empty());
}

}  // namespace cudaconv::test
