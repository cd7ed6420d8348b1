// No signal, thread limit or resource limit leaves a file behind: cudaconv
// in a child process under setrlimit, writing into a closed pipe, or
// stopped in the middle of writing its output and sent a signal there.
// Nor does a closed standard descriptor or a small stack limit spoil one.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include "kernels/runtime/device_info.hpp"
#include "io/npy.hpp"
#include "support/child_process.hpp"
#include "support/files.hpp"
#include "support/run_command.hpp"
#include "support/sanitizers.hpp"

namespace cudaconv::test {
namespace fs = std::filesystem;

namespace {

bool is_temp_name(const std::string& name) {
    return !name.empty() && name[0] == '.' && name.find(".cudaconv-") != std::string::npos;
}

std::vector<std::string> entries(const fs::path& folder) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(folder)) names.push_back(e.path().filename());
    return names;
}

bool has_temp_file(const fs::path& folder) {
    for (const std::string& name : entries(folder)) {
        if (is_temp_name(name)) return true;
    }
    return false;
}

// Files created in a folder, as they are created (inotify).
class CreationWatch {
public:
    explicit CreationWatch(const fs::path& folder) : fd_(inotify_init1(IN_CLOEXEC | IN_NONBLOCK)) {
        REQUIRE(fd_ >= 0);
        REQUIRE(inotify_add_watch(fd_, folder.c_str(), IN_CREATE) >= 0);
    }
    CreationWatch(const CreationWatch&) = delete;
    CreationWatch& operator=(const CreationWatch&) = delete;
    ~CreationWatch() { close(fd_); }

    // Waits until a temporary file of cudaconv's is created; false if the
    // child ends first.
    bool wait_for_temp_file(Child& child) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (std::chrono::steady_clock::now() < deadline) {
            pollfd ready{fd_, POLLIN, 0};
            if (poll(&ready, 1, 10) > 0) {
                alignas(inotify_event) char buffer[4096];
                const ssize_t got = read(fd_, buffer, sizeof buffer);
                for (ssize_t at = 0; at < got;) {
                    const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
                    if (event->len > 0 && is_temp_name(event->name)) return true;
                    at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
                }
            } else if (child.exited()) {
                return false;
            }
        }
        FAIL("no temporary file within a minute");
        return false;
    }

private:
    int fd_;
};

// A 1500x1500 RGB PPM of 6.75 MB: its copy takes a while to write, and
// decodes and encodes at once (-f none).
void write_large_image(const fs::path& path) {
    constexpr int kSide = 1500;
    std::string bytes = "P6\n" + std::to_string(kSide) + " " + std::to_string(kSide) + "\n255\n";
    const std::size_t header = bytes.size();
    bytes.resize(header + std::size_t{kSide} * kSide * 3);
    for (std::size_t i = header; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 131 % 251);
    write_file(path, bytes);
}

struct WriteSignalled {
    int status = 0;  // cudaconv's wait status
    fs::path out;    // the folder it wrote into
    std::string err;
};

// cudaconv writing big.ppm's copy into a fresh folder, stopped while its
// temporary file is there, then sent `number` and let go on. A write that
// ended before the stop took hold is tried again.
WriteSignalled signal_during_write(const TempDir& dir, int number, const ChildSetup& setup = {}) {
    constexpr int kAttempts = 5;
    for (int attempt = 0; attempt < kAttempts; ++attempt) {
        const fs::path out = dir / ("out" + std::to_string(attempt));
        fs::create_directory(out);
        CreationWatch watch(out);
        Child child({"big.ppm", "-f", "none", "-j", "1", "-o", (out / "big.ppm").string()},
                    dir.path(), setup);
        if (!watch.wait_for_temp_file(child)) FAIL("cudaconv ended first: " << child.err());
        child.stop();
        if (!has_temp_file(out)) {  // written and renamed already
            child.signal(SIGCONT);
            child.wait();
            continue;
        }
        child.signal(number);
        child.signal(SIGCONT);
        const ChildExit result = child.wait();
        return {result.status, out, result.err};
    }
    FAIL("the write ended before the stop " << kAttempts << " times");
    return {};
}

bool decodes(const fs::path& p) { return !cv::imread(p.string(), cv::IMREAD_UNCHANGED).empty(); }

// The child ended by itself with exit 1 (work failed), saying `error`.
void check_failed(const ChildExit& result, const std::string& error) {
    INFO(result.err);
    REQUIRE(WIFEXITED(result.status));
    CHECK(WEXITSTATUS(result.status) == 1);
    CHECK_THAT(result.err, Catch::Contains(error));
}

}  // namespace

// SIGINT, SIGTERM and SIGHUP ask to stop: the write under way finishes, the
// summary names the signal, exit 128 + its number.
TEST_CASE("a stop signal during a write lets it finish and leaves no temporary file",
          "[cli][signal]") {
    const int number = GENERATE(SIGINT, SIGTERM, SIGHUP);
    const std::string name = std::string("SIG") + sigabbrev_np(number);
    INFO(name);
    TempDir dir;
    write_large_image(dir / "big.ppm");
    const WriteSignalled run = signal_during_write(dir, number);
    INFO(run.err);
    REQUIRE(WIFEXITED(run.status));
    CHECK(WEXITSTATUS(run.status) == 128 + number);
    CHECK_THAT(run.err, Catch::Contains("stopped by " + name));
    CHECK(entries(run.out) == std::vector<std::string>{"big.ppm"});
    CHECK(decodes(run.out / "big.ppm"));
}

namespace {

// A run of --repeat 1000000 --json FILE is repeating once FILE is there
// (made before any image starts) and a moment has passed.
void wait_until_repeating(const Child& child, const fs::path& json) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (child.running() && !fs::exists(json) && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
}

}  // namespace

// Ctrl-C during --repeat ends the runs at once, on the CPU and on the GPU
// (a million repeats would take minutes): the image under way is not
// written, as any image a stopped batch has not begun to write, and the
// summary names the signal.
TEST_CASE("a stop signal ends --repeat's runs at once", "[cli][signal]") {
    std::vector<std::string> variants{"cpu"};
    if (!probe_devices().devices.empty()) variants.push_back("fast");
    for (const std::string& variant : variants) {
        INFO(variant);
        TempDir dir;
        Child child({sample("camera.png"), "-f", "edge", "-k", variant, "--repeat", "1000000",
                     "--json", "runs.jsonl", "-o", "out.png"},
                    dir.path());
        wait_until_repeating(child, dir / "runs.jsonl");
        REQUIRE(child.running());
        const auto signalled = std::chrono::steady_clock::now();
        child.signal(SIGINT);
        const ChildExit m = child.wait();
        const double signal_to_exit_s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - signalled).count();
        INFO(m.err);
        CHECK(m.exit_code == 130);
        CHECK(signal_to_exit_s < 2.0);
        CHECK_THAT(m.err, Catch::Contains("not done 1 of 1 image") &&
                              Catch::Contains("stopped by SIGINT"));
        CHECK_FALSE(fs::exists(dir / "out.png"));
    }
}

// And a convolution layer's --repeat (cli/layer_command.cpp) the same way.
TEST_CASE("a stop signal ends a layer's --repeat at once", "[cli][signal][layer]") {
    TempDir dir;
    const std::vector<float> weights(3 * 3 * 3 * 8, 0.5f);
    const std::vector<float> input(64 * 64 * 3, 1.0f);
    for (const auto& [name, shape, data] :
         {std::tuple{"w.npy", std::vector<std::int64_t>{3, 3, 3, 8}, &weights},
          std::tuple{"x.npy", std::vector<std::int64_t>{64, 64, 3}, &input}}) {
        const std::vector<std::uint8_t> file = encode_npy(shape, data->data());
        write_file(dir / name, std::string(file.begin(), file.end()));
    }
    Child child({"x.npy", "--weights", "w.npy", "-k", "cpu", "--repeat", "1000000", "--json",
                 "runs.jsonl", "-o", "out.npy"},
                dir.path());
    wait_until_repeating(child, dir / "runs.jsonl");
    REQUIRE(child.running());
    const auto signalled = std::chrono::steady_clock::now();
    child.signal(SIGTERM);
    const ChildExit m = child.wait();
    INFO(m.err);
    CHECK(m.exit_code == 143);
    CHECK(std::chrono::steady_clock::now() - signalled < std::chrono::seconds(2));
    CHECK_THAT(m.err,
               Catch::Contains("not done 1 of 1 image") && Catch::Contains("stopped by SIGTERM"));
    CHECK_FALSE(fs::exists(dir / "out.npy"));
}

// The others end at once: the temporary file removed, then the signal's
// own action (the faults' too, sent here as kill sends them). The writing
// thread may win the race against the handler after SIGCONT and finish its
// rename first; then the finished image is there, whole.
TEST_CASE("a signal that ends the process during a write leaves no temporary file",
          "[cli][signal]") {
    const int number = GENERATE(SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU,
                                SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL);
    INFO("SIG" << sigabbrev_np(number));
    TempDir dir;
    write_large_image(dir / "big.ppm");
    const WriteSignalled run = signal_during_write(dir, number);
    INFO(run.err);
    REQUIRE(WIFSIGNALED(run.status));
    CHECK(WTERMSIG(run.status) == number);
    const std::vector<std::string> left = entries(run.out);
    CHECK((left.empty() || left == std::vector<std::string>{"big.ppm"}));
    if (!left.empty()) CHECK(decodes(run.out / "big.ppm"));
}

// nohup: a signal ignored when cudaconv starts stays ignored.
TEST_CASE("a signal ignored by the parent stays ignored", "[cli][signal]") {
    TempDir dir;
    write_large_image(dir / "big.ppm");
    const WriteSignalled run = signal_during_write(dir, SIGHUP, {{}, {}, -1, {SIGHUP}});
    INFO(run.err);
    REQUIRE(WIFEXITED(run.status));
    CHECK(WEXITSTATUS(run.status) == 0);
    CHECK(entries(run.out) == std::vector<std::string>{"big.ppm"});
}

// A file size limit (ulimit -f): the write fails as on a full disk.
TEST_CASE("a file size limit fails the write with a message and leaves nothing", "[cli][signal]") {
    TempDir dir;
    write_large_image(dir / "big.ppm");
    fs::create_directory(dir / "out");
    Child child({"big.ppm", "-f", "none", "-o", "out/big.ppm"}, dir.path(),
                {{{RLIMIT_FSIZE, 1 << 20}}});
    check_failed(child.wait(), "cudaconv: error: out/big.ppm: cannot write: File too large");
    CHECK(entries(dir / "out").empty());
}

// The JSON file's write fails part-way through a line (ulimit -f, as a
// full disk): the file keeps the lines before it, each whole.
TEST_CASE("a JSON file that cannot be written on keeps its whole lines", "[cli][signal]") {
    TempDir dir;
    fs::create_directory(dir / "in");
    const cv::Mat tiny(8, 8, CV_8UC3, cv::Scalar(10, 200, 30));
    for (int i = 0; i < 40; ++i) {
        REQUIRE(cv::imwrite((dir / "in" / ("image-" + std::to_string(i) + ".png")).string(), tiny));
    }
    Child child({"in", "-f", "edge", "-o", "out/", "--json", "j.json", "-j", "1"}, dir.path(),
                {{{RLIMIT_FSIZE, 2048}}});
    check_failed(child.wait(), "cudaconv: error: j.json: cannot write: File too large");
    const std::string json = read_bytes(dir / "j.json");
    INFO(json);
    REQUIRE(!json.empty());
    CHECK(json.back() == '\n');
    std::size_t lines = 0;
    for (std::size_t at = 0; at < json.size();) {
        const std::size_t end = json.find('\n', at);
        CHECK_NOTHROW(nlohmann::json::parse(json.substr(at, end - at)));
        ++lines;
        at = end + 1;
    }
    CHECK(lines >= 2);
    CHECK(json.size() <= 2048);
}

// A folder where no file can be made (read-only to this user): the plan
// finds it, for image outputs and the JSON file, before any image is read.
TEST_CASE("a read-only output folder fails before any work", "[cli][signal]") {
    TempDir dir;
    const fs::perms read_only = fs::perms::owner_read | fs::perms::owner_exec |
                                fs::perms::group_read | fs::perms::group_exec |
                                fs::perms::others_read | fs::perms::others_exec;
    fs::create_directory(dir / "ro");
    fs::permissions(dir / "ro", read_only);
    // One whose output is there already: --skip-existing writes nothing in it.
    fs::create_directory(dir / "ro-done");
    copy_sample("camera-crop.png", dir / "ro-done" / "o.png");
    fs::permissions(dir / "ro-done", read_only);
    copy_sample("camera-crop.png", dir / "in.png");
    ChildSetup setup;
    setup.without_permission_override = true;
    {
        Child child({"in.png", "-f", "edge", "-o", "ro-done/o.png", "--skip-existing"}, dir.path(),
                    setup);
        const ChildExit result = child.wait();
        if (result.exit_code == 126) {
            std::cout << "not run: root's permission override cannot be dropped here\n";
            return;
        }
        INFO(result.err);
        CHECK(result.exit_code == 0);
    }
    for (const auto& [args, error] : std::vector<std::pair<std::vector<std::string>, std::string>>{
             {{"in.png", "-f", "edge", "-o", "ro/o.png"},
              "cudaconv: error: ro/o.png: cannot write: the folder ro is not writable "
              "(Permission denied)"},
             {{"in.png", "-f", "edge", "-o", "o.png", "--json", "ro/j.json"},
              "cudaconv: error: --json ro/j.json: cannot write: the folder ro is not writable "
              "(Permission denied)"}}) {
        Child child(args, dir.path(), setup);
        const ChildExit result = child.wait();
        check_failed(result, error);
        CHECK(std::count(result.err.begin(), result.err.end(), '\n') == 1);
        CHECK(fs::is_empty(dir / "ro"));
        CHECK_FALSE(fs::exists(dir / "o.png"));
    }
}

// cuFFT (290 MB) is opened only when the fft variant runs: a CPU job, and
// --version, start and run where the address space is small.
TEST_CASE("a CPU job runs under a 400 MB address space limit", "[cli][signal]") {
#if defined(CUDACONV_TEST_UNDER_SANITIZER)
    std::cout << "not run: an address space limit under a sanitizer\n";
    return;
#endif
    TempDir dir;
    copy_sample("camera-crop.png", dir / "in.png");
    const ChildSetup setup{{{RLIMIT_AS, rlim_t{400} << 20}}};
    for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
             {"--version"}, {"in.png", "-f", "edge", "-k", "cpu", "-o", "out.png"}}) {
        INFO(args.front());
        Child child(args, dir.path(), setup);
        const ChildExit result = child.wait();
        INFO(result.err);
        CHECK(result.exit_code == 0);
    }
    CHECK(fs::exists(dir / "out.png"));
}

// Bytes that are no image, without end (a device, a pipe that never
// closes): refused at their first bytes, not read into memory.
TEST_CASE("an endless input that is no image is refused at once", "[cli][signal]") {
#if defined(CUDACONV_TEST_UNDER_SANITIZER)
    std::cout << "not run: an address space limit under a sanitizer\n";
    return;
#endif
    TempDir dir;
    Child child({"/dev/zero", "-f", "edge", "-o", "o.png"}, dir.path(),
                {{{RLIMIT_AS, rlim_t{4} << 30}}});
    const ChildExit result = child.wait();
    check_failed(result, "cudaconv: error: /dev/zero: not an image (unknown format");
    CHECK(result.peak_rss_kb < 1'000'000);
    CHECK_FALSE(fs::exists(dir / "o.png"));
}

// An endless stream on stdin that starts as a JPEG: read until memory
// would run out, then one line naming it.
TEST_CASE("an endless input too large for memory is one error line", "[cli][signal]") {
#if defined(CUDACONV_TEST_UNDER_SANITIZER)
    std::cout << "not run: an address space limit under a sanitizer\n";
    return;
#endif
    TempDir dir;
    int pipe_fds[2];
    REQUIRE(pipe2(pipe_fds, O_CLOEXEC) == 0);
    // The writer sees EPIPE, not SIGPIPE, once cudaconv has stopped reading.
    struct sigaction ignore = {};
    struct sigaction before = {};
    ignore.sa_handler = SIG_IGN;
    REQUIRE(sigaction(SIGPIPE, &ignore, &before) == 0);
    ChildSetup setup{{{RLIMIT_AS, rlim_t{3} << 30}}};
    setup.stdin_fd = pipe_fds[0];
    Child child({"-", "-f", "edge", "-o", "o.png"}, dir.path(), setup);
    ::close(pipe_fds[0]);
    std::thread writer([fd = pipe_fds[1]] {
        const char jpeg_start[] = {'\xFF', '\xD8', '\xFF'};
        std::vector<char> block(1 << 20, 0);
        bool open = ::write(fd, jpeg_start, sizeof jpeg_start) > 0;
        while (open) open = ::write(fd, block.data(), block.size()) > 0;  // until EPIPE
        ::close(fd);
    });
    const ChildExit result = child.wait();
    writer.join();
    sigaction(SIGPIPE, &before, nullptr);
    check_failed(result, "cudaconv: error: <stdin>: too large to read into memory");
    CHECK(std::count(result.err.begin(), result.err.end(), '\n') == 1);
    CHECK_FALSE(fs::exists(dir / "o.png"));
}

// An input that can be read only once (`cudaconv <(cat a.png)`: a pipe
// reopened through /dev/fd): no look at its header before the decode.
TEST_CASE("an input from a pipe is read once, by the decode", "[cli][signal]") {
    TempDir dir;
    copy_sample("chelsea.png", dir / "in.png");
    REQUIRE(run_cudaconv({"in.png", "-f", "edge", "-o", "file.png"}, dir.path()).exit_code == 0);
    const std::vector<float> weights{0.25f, 0.5f, 0.25f};  // 1x1, 3 channels into 1
    const std::vector<std::uint8_t> npy = encode_npy({1, 1, 3, 1}, weights.data());
    std::ofstream(dir / "w.npy", std::ios::binary)
        .write(reinterpret_cast<const char*>(npy.data()), static_cast<std::streamsize>(npy.size()));
    const std::string bytes = read_bytes(dir / "in.png");
    // A write after cudaconv has gone is EPIPE here, not SIGPIPE.
    struct sigaction ignore = {};
    struct sigaction before = {};
    ignore.sa_handler = SIG_IGN;
    REQUIRE(sigaction(SIGPIPE, &ignore, &before) == 0);
    for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
             {"/dev/stdin", "-f", "edge", "-o", "pipe.png"},
             {"/dev/stdin", "-f", "edge", "-k", "cpu", "-o", "pipe.png"},
             {"/dev/stdin", "--weights", "w.npy", "-o", "pipe.npy"}}) {
        INFO(args[2]);
        int pipe_fds[2];
        REQUIRE(pipe2(pipe_fds, O_CLOEXEC) == 0);
        ChildSetup setup;
        setup.stdin_fd = pipe_fds[0];
        Child child(args, dir.path(), setup);
        ::close(pipe_fds[0]);
        const ssize_t written = ::write(pipe_fds[1], bytes.data(), bytes.size());
        ::close(pipe_fds[1]);
        const ChildExit result = child.wait();
        INFO(result.err);
        CHECK(written == static_cast<ssize_t>(bytes.size()));
        CHECK(result.exit_code == 0);
        // Pixels, not bytes: where a GPU is, auto may price the file (its
        // header read ahead) and the pipe (not) differently, and a CUDA
        // variant's PNG is compressed on the device, the CPU's by libpng.
        if (args[1] == "-f") {
            const cv::Mat piped = cv::imread((dir / "pipe.png").string(), cv::IMREAD_UNCHANGED);
            const cv::Mat from_file = cv::imread((dir / "file.png").string(), cv::IMREAD_UNCHANGED);
            REQUIRE(!piped.empty());
            REQUIRE(piped.size() == from_file.size());
            REQUIRE(piped.type() == from_file.type());
            CHECK(cv::norm(piped, from_file, cv::NORM_INF) <= 1.0);  // docs/SPEC.md, Tolerances
        }
        fs::remove(dir / "pipe.png");
    }
    sigaction(SIGPIPE, &before, nullptr);
    CHECK(fs::exists(dir / "pipe.npy"));
}

// Text on stdout that cannot be written (a full disk: /dev/full) fails the
// run with a line, as `cp` and `sort` do, whatever command printed it.
TEST_CASE("stdout that cannot be written fails the run, whatever printed it", "[cli][signal]") {
    TempDir dir;
    copy_sample("camera-crop.png", dir / "a" / "x.png");
    copy_sample("camera-crop.png", dir / "b" / "x.png");
    for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
             {"list", "filters"},
             {"--version"},
             {"compare", "a", "b"},
             {"a/x.png", "-f", "edge", "-o", "out.png", "--timings"}}) {
        INFO(args.front());
        const int full = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
        REQUIRE(full >= 0);
        Child child(args, dir.path(), {{}, {}, full});
        ::close(full);
        check_failed(child.wait(), "cudaconv: error: <stdout>: cannot write");
    }
    CHECK(fs::exists(dir / "out.png"));  // the image itself was written
}

// `cudaconv ... -o - | head -c10` once head has gone: an error line, exit 1.
TEST_CASE("writing to a closed pipe is an error, not a silent death", "[cli][signal]") {
    TempDir dir;
    int pipe_fds[2];
    REQUIRE(pipe(pipe_fds) == 0);
    close(pipe_fds[0]);  // the reader is gone
    Child child({sample("camera.png"), "-f", "edge", "-o", "-"}, dir.path(), {{}, {}, pipe_fds[1]});
    close(pipe_fds[1]);
    check_failed(child.wait(), "cudaconv: error: <stdout>: cannot write: Broken pipe");
}

// -j 1024 where the address space holds about a dozen thread stacks
// (ulimit -s 1 GB, ulimit -v 16 GB): fewer workers, a warning, the output.
// Also where OpenCV's pool would take every one of those stacks itself, as
// a pool of plain threads does on a 16-core machine: the pool shrinks and
// leaves the batch its threads.
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
    const std::string pool = GENERATE(as<std::string>{}, "", "16");
    INFO("OPENCV_FOR_THREADS_NUM=" << pool);
    std::vector<std::string> environment;
    if (!pool.empty()) environment.push_back("OPENCV_FOR_THREADS_NUM=" + pool);
    Child child(with({"-j", "1024", "-o", "out/edge.png"}), dir.path(),
                {{{RLIMIT_STACK, kGiB}, {RLIMIT_AS, 16 * kGiB}}, environment});
    const ChildExit result = child.wait();
    INFO(result.err);
    REQUIRE(WIFEXITED(result.status));
    CHECK(WEXITSTATUS(result.status) == 0);
    CHECK_THAT(result.err,
               Catch::Contains("of the 1024 workers asked for (-j): the system would start only"));
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
    Child child(
        {sample("chelsea.png"), sample("camera.png"), "-f", "edge", "-k", "cpu", "-o", "out/"},
        dir.path(), {{{RLIMIT_STACK, 64 * kGiB}, {RLIMIT_AS, 16 * kGiB}}});
    const ChildExit result = child.wait();
    check_failed(result, "cudaconv: error: cannot start a thread: ");
    INFO(result.err);
    CHECK_THAT(result.err, Catch::Contains(" (the batch's GPU thread)\n"));
    CHECK(result.err.find("error:") == result.err.rfind("error:"));  // one error line
    CHECK(entries(dir / "out").empty());
}

namespace {

// A folder of 12 images (PNG 8-bit grey and colour, 16-bit) for a batch
// that prints a line an image (-v), timings (--timings) and, its taps
// summing to 9, a saturation warning for each.
const std::vector<std::string> kBatchSamples{"chelsea.png", "camera.png", "camera16-crop.png"};
constexpr const char* kSaturatingFilter = "3x3:1,1,1,1,1,1,1,1,1";

void write_batch_inputs(const fs::path& folder) {
    for (int copy = 0; copy < 4; ++copy) {
        for (const std::string& name : kBatchSamples) {
            copy_sample(name, folder / (std::to_string(copy) + "-" + name));
        }
    }
}

std::vector<std::string> batch_args(const std::string& out, const std::string& json) {
    std::vector<std::string> args{
        "in/", "-f", kSaturatingFilter, "-k", "cpu", "-j", "2", "--timings", "-v", "-o", out};
    if (!json.empty()) args.insert(args.end(), {"--json", json});
    return args;
}

// Every file of `folder` byte for byte the same as in `reference`.
void check_same_files(const fs::path& folder, const fs::path& reference) {
    REQUIRE(entries(folder).size() == entries(reference).size());
    for (const std::string& name : entries(reference)) {
        INFO(name);
        CHECK(read_bytes(folder / name) == read_bytes(reference / name));
    }
}

}  // namespace

// `cudaconv ... >&-` or `2>&-`: the files cudaconv opens would take
// descriptor 1 or 2, and --timings or the log lines would go into an
// output image or --json's file. /dev/null takes their place first, the
// wrong way round, so that what is written there still fails.
TEST_CASE("closed standard descriptors let nothing into the outputs", "[cli][limits]") {
    const std::vector<int> closed =
        GENERATE(std::vector<int>{1}, std::vector<int>{2}, std::vector<int>{0, 1, 2});
    INFO("closed: " << closed.size() << " descriptors from " << closed.front());
    TempDir dir;
    write_batch_inputs(dir / "in");
    const CommandResult reference =
        run_cudaconv(batch_args("reference/", "reference.json"), dir.path());
    REQUIRE(reference.exit_code == 0);
    REQUIRE_THAT(reference.err, Catch::Contains("saturate at"));
    REQUIRE_THAT(reference.out, Catch::Contains("decode"));
    for (const std::string json : {"", "runs.json"}) {
        INFO("--json " << json);
        const std::string out = json.empty() ? "plain/" : "with-json/";
        ChildSetup setup;
        setup.closed = closed;
        Child child(batch_args(out, json), dir.path(), setup);
        const ChildExit result = child.wait();
        INFO(result.err);
        // --timings' text cannot go to a closed stdout: said, where stderr
        // is open, and exit 1; the images are written all the same.
        const bool stdout_closed = std::count(closed.begin(), closed.end(), 1) > 0;
        REQUIRE(result.exit_code == (stdout_closed ? 1 : 0));
        if (closed == std::vector<int>{1}) {
            CHECK_THAT(result.err, Catch::Contains("<stdout>: cannot write: Bad file descriptor"));
        }
        check_same_files(dir / out, dir / "reference");
        if (json.empty()) continue;
        std::istringstream lines(read_bytes(dir / json));
        int parsed = 0;
        for (std::string line; std::getline(lines, line); ++parsed) {
            INFO(line);
            CHECK_NOTHROW(nlohmann::json::parse(line));
        }
        CHECK(parsed == 13);  // an image a line, and the summary
    }
}

// `ulimit -S -s 20` (the soft limit; the hard one as it was): worker
// threads, whose stacks glibc sizes by the limit, would crash in a
// decoder, the main thread in a library (before the fix, 6 of 10 runs
// here did). cudaconv raises the limit to what it needs.
TEST_CASE("a small soft stack limit is raised to what cudaconv needs", "[cli][limits]") {
#if defined(CUDACONV_TEST_UNDER_SANITIZER)
    std::cout << "not run: the sanitizers' runtime starts before main, on the small stack\n";
    return;
#endif
    rlimit current{};
    REQUIRE(getrlimit(RLIMIT_STACK, &current) == 0);
    if (current.rlim_max != RLIM_INFINITY && current.rlim_max < (rlim_t{1} << 20)) {
        std::cout << "not run: the hard stack limit here is below 1 MiB\n";
        return;
    }
    // The limit holds the environment too, and at about 16 KiB the dynamic
    // loader itself fails, before any code of cudaconv's runs: so the
    // child gets a small environment, whatever this process has.
    ChildSetup setup{{{RLIMIT_STACK, 20 << 10, current.rlim_max}}};
    setup.environment_only = true;
    if (const char* path = std::getenv("LD_LIBRARY_PATH")) {
        setup.environment.push_back(std::string("LD_LIBRARY_PATH=") + path);
    }
    TempDir dir;
    write_batch_inputs(dir / "in");
    copy_sample("rocket.jpg", dir / "in" / "rocket.jpg");
    const CommandResult reference = run_cudaconv(
        {"in/", "-f", "gaussian:sigma=2", "-k", "cpu", "-j", "2", "-o", "reference/"}, dir.path());
    REQUIRE(reference.exit_code == 0);
    for (int run = 0; run < 6; ++run) {
        INFO("run " << run);
        const std::string out = "out" + std::to_string(run) + "/";
        Child child({"in/", "-f", "gaussian:sigma=2", "-k", "cpu", "-j", "2", "-o", out},
                    dir.path(), setup);
        const ChildExit result = child.wait();
        INFO(result.err);
        REQUIRE(result.exit_code == 0);
        check_same_files(dir / out, dir / "reference");
    }
    Child version({"--version"}, dir.path(), setup);
    CHECK(version.wait().exit_code == 0);
}

// `ulimit -s 64` (soft and hard): the limit cannot be raised, and cudaconv
// says so rather than crash somewhere later.
TEST_CASE("a hard stack limit below what cudaconv needs is exit 2 with one line", "[cli][limits]") {
#if defined(CUDACONV_TEST_UNDER_SANITIZER)
    std::cout << "not run: the sanitizers' runtime starts before main, on the small stack\n";
    return;
#endif
    TempDir dir;
    fs::create_directory(dir / "out");
    Child child({sample("camera-crop.png"), "-f", "edge", "-k", "cpu", "-o", "out/x.png"},
                dir.path(), {{{RLIMIT_STACK, 64 << 10}}});
    const ChildExit result = child.wait();
    INFO(result.err);
    REQUIRE(WIFEXITED(result.status));
    CHECK(WEXITSTATUS(result.status) == 2);
    CHECK(result.err ==
          "cudaconv: error: the stack size limit (ulimit -s) is 64 KiB, and its hard limit 64 "
          "KiB: cudaconv needs at least 1024 KiB\n");
    CHECK(entries(dir / "out").empty());
}

}  // namespace cudaconv::test
