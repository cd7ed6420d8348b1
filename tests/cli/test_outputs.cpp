// Every file cudaconv writes is an output, checked before any work: the
// --json file of a batch (and how it is written), template outputs and
// their root, the reports of bench and the heat maps of compare; and the
// options that would do nothing, refused or warned of.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include "support/files.hpp"
#include "support/run_command.hpp"
#include "support/skip_without_device.hpp"

namespace cudaconv::test {
namespace fs = std::filesystem;

namespace {

bool decodes(const fs::path& p) { return !cv::imread(p.string(), cv::IMREAD_UNCHANGED).empty(); }

std::size_t count(const std::string& text, const std::string& part) {
    std::size_t n = 0;
    for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1))
        ++n;
    return n;
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

// cudaconv in a process of its own, in `dir`, its stdout on `out_fd` and
// its stderr in dir/stderr.txt, with SIGPIPE ignored (as a shell's `trap ''
// PIPE` leaves it for the programs it starts), so that a write to a closed
// pipe fails with EPIPE. Killed and reaped when the object goes, whatever
// a failed REQUIRE left.
class Background {
public:
    Background(const fs::path& dir, const std::vector<std::string>& args, int out_fd) : dir_(dir) {
        std::vector<std::string> storage{cudaconv_binary()};
        storage.insert(storage.end(), args.begin(), args.end());
        std::vector<char*> argv;
        for (std::string& a : storage) argv.push_back(a.data());
        argv.push_back(nullptr);
        const std::string err_path = (dir / "stderr.txt").string();
        pid_ = fork();
        REQUIRE(pid_ >= 0);
        if (pid_ == 0) {  // only async-signal-safe calls until exec
            const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (err < 0 || chdir(dir.c_str()) != 0 || dup2(err, 2) < 0 || dup2(out_fd, 1) < 0) {
                _exit(127);
            }
            signal(SIGPIPE, SIG_IGN);
            execv(argv[0], argv.data());
            _exit(127);
        }
    }
    Background(const Background&) = delete;
    Background& operator=(const Background&) = delete;
    ~Background() {
        if (!reaped_) {
            kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
        }
    }

    bool running() {
        if (reaped_) return false;
        if (waitpid(pid_, &status_, WNOHANG) == 0) return true;
        reaped_ = true;
        return false;
    }

    // The wait status, within the deadline.
    int wait() {
        while (running()) {
            REQUIRE(std::chrono::steady_clock::now() < deadline_);
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        return status_;
    }

    void kill9() { REQUIRE(kill(pid_, SIGKILL) == 0); }
    std::string err() const { return read_bytes(dir_ / "stderr.txt"); }
    bool before_deadline() const { return std::chrono::steady_clock::now() < deadline_; }

private:
    fs::path dir_;
    pid_t pid_ = -1;
    int status_ = 0;
    bool reaped_ = false;
    std::chrono::steady_clock::time_point deadline_ =
        std::chrono::steady_clock::now() + std::chrono::seconds(120);
};

// in/a.png, in/b.png, in/c.jpg: three images that filter well.
void make_three_images(const fs::path& in) {
    copy_sample("camera.png", in / "a.png");
    copy_sample("chelsea.png", in / "b.png");
    copy_sample("rocket.jpg", in / "c.jpg");
}

// Removed when the test ends: a file that a cudaconv resolving templates
// wrongly would write outside the test's folder (at the filesystem root).
struct RemovedAtEnd {
    fs::path path;
    ~RemovedAtEnd() {
        std::error_code ignored;
        fs::remove(path, ignored);
    }
};

}  // namespace

TEST_CASE("json: --json FILE may not be an input or an image's output", "[cli][outputs]") {
    TempDir dir;
    copy_sample("camera.png", dir / "keep.png");
    const std::string keep = read_bytes(dir / "keep.png");
    struct Case {
        const char* what;
        std::vector<std::string> args;
        const char* message;
    };
    write_file(dir / "list.txt", "keep.png\n");
    const std::vector<Case> cases{
        {"an input",
         {"keep.png", "-f", "edge", "-o", "o.png", "--json", "keep.png"},
         "--json keep.png: the JSON file would overwrite an input"},
        {"an input, --overwrite",
         {"keep.png", "-f", "edge", "-o", "o.png", "--json", "keep.png", "--overwrite"},
         "--json keep.png: the JSON file would overwrite an input"},
        {"the --from list",
         {"--from", "list.txt", "-f", "edge", "-o", "o.png", "--json", "list.txt", "--overwrite"},
         "--json list.txt: the JSON file would overwrite an input"},
        {"the image output",
         {"keep.png", "-f", "edge", "-o", "o.png", "--json", "o.png"},
         "--json o.png: keep.png's image output is that file too"},
        {"the image output, named another way",
         {"keep.png", "-f", "edge", "-o", "o.png", "--json", "./o.png"},
         "--json ./o.png: keep.png's image output is that file too"},
        {"an output {kernel} names later",
         {"keep.png", "-f", "edge", "-o", "o-{kernel}.png", "--json", "o-cpu.png"},
         "--json o-cpu.png: keep.png's image output is that file too when -k auto chooses cpu"},
    };
    for (const Case& c : cases) {
        SECTION(c.what) {
            const auto before = dir.entries();
            const auto r = run_cudaconv(c.args, dir.path());
            INFO(r.err);
            CHECK(r.exit_code == 2);
            CHECK_THAT(r.err, Catch::Contains(c.message));
            CHECK(count(r.err, "\n") == 1);
            CHECK(dir.entries() == before);  // no image, no JSON file
            CHECK(read_bytes(dir / "keep.png") == keep);
            CHECK(read_bytes(dir / "list.txt") == "keep.png\n");
        }
    }
}

TEST_CASE("json: --json FILE is refused if it exists unless --overwrite, its folder checked first",
          "[cli][outputs]") {
    TempDir dir;
    copy_sample("camera.png", dir / "in.png");
    write_file(dir / "j.json", "old");

    SECTION("it exists: refused before any work") {
        const auto r =
            run_cudaconv({"in.png", "-f", "edge", "-o", "o.png", "--json", "j.json"}, dir.path());
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Contains("--json j.json: exists already; nothing was done "
                                          "(--overwrite replaces it)"));
        CHECK(read_bytes(dir / "j.json") == "old");
        CHECK_FALSE(fs::exists(dir / "o.png"));
    }
    SECTION("--skip-existing keeps images, not the JSON file") {
        const auto r = run_cudaconv(
            {"in.png", "-f", "edge", "-o", "o.png", "--json", "j.json", "--skip-existing"},
            dir.path());
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Contains("--skip-existing keeps images, not the JSON file: name "
                                          "another file, or use --overwrite instead"));
        CHECK(read_bytes(dir / "j.json") == "old");
        CHECK_FALSE(fs::exists(dir / "o.png"));
    }
    SECTION("--overwrite replaces it") {
        const auto r = run_cudaconv(
            {"in.png", "-f", "edge", "-o", "o.png", "--json", "j.json", "--overwrite"}, dir.path());
        INFO(r.err);
        CHECK(r.exit_code == 0);
        const auto lines = lines_of(read_bytes(dir / "j.json"));
        REQUIRE(lines.size() == 2);
        CHECK(nlohmann::json::parse(lines[0])["status"] == "done");
        CHECK(nlohmann::json::parse(lines[1])["summary"] == true);
    }
    SECTION("a missing folder fails before any image is written") {
        const auto r = run_cudaconv(
            {"in.png", "-f", "edge", "-o", "o.png", "--json", "nosuch/j.json"}, dir.path());
        CHECK(r.exit_code == 1);
        CHECK_THAT(r.err,
                   Catch::Contains(
                       "--json nosuch/j.json: cannot write: the folder nosuch does not exist"));
        CHECK(count(r.err, "\n") == 1);
        CHECK_FALSE(fs::exists(dir / "o.png"));
    }
    SECTION("a folder that the outputs make is fine") {
        const auto r = run_cudaconv({"in.png", "-f", "edge", "-o", "out/", "--json", "out/j.json"},
                                    dir.path());
        INFO(r.err);
        CHECK(r.exit_code == 0);
        CHECK(decodes(dir / "out" / "in.png"));
        CHECK(lines_of(read_bytes(dir / "out" / "j.json")).size() == 2);
    }
}

// Each line goes out with one write() as its image finishes: a run ended
// by SIGKILL (no handler, no chance to flush) keeps the lines so far.
TEST_CASE("json: --json FILE is written line by line: a kill -9 keeps the lines so far",
          "[cli][outputs][signal]") {
    TempDir dir;
    for (int i = 0; i < 24; ++i) {
        copy_sample("rocket.jpg", dir / "in" / ("img" + std::to_string(100 + i) + ".jpg"));
    }
    const int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    REQUIRE(null >= 0);
    Background run(dir.path(),
                   {"in", "-f", "box:9", "-k", "cpu-ref", "-j", "2", "-o", "out/{stem}.png",
                    "--json", "lines.json"},
                   null);
    close(null);
    bool line_seen = false;
    while (!line_seen && run.running() && run.before_deadline()) {
        const std::string text = fs::exists(dir / "lines.json") ? read_bytes(dir / "lines.json")
                                                                : "";
        line_seen = text.find("\"done\"") != std::string::npos && text.back() == '\n';
        if (!line_seen) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    REQUIRE(line_seen);
    REQUIRE(run.running());  // stopped mid-batch
    run.kill9();
    run.wait();
    const std::string text = read_bytes(dir / "lines.json");
    CHECK(text.back() == '\n');
    std::size_t done = 0;
    for (const std::string& line : lines_of(text)) {
        INFO(line);
        const auto j = nlohmann::json::parse(line);
        CHECK_FALSE(j.contains("summary"));  // the batch never finished
        done += j.value("status", "") == "done";
    }
    CHECK(done >= 1);
    CHECK(done < 24);
}

TEST_CASE("json: a line that cannot be written is one error and exit 1, the images stay",
          "[cli][outputs]") {
    TempDir dir;
    make_three_images(dir / "in");

    SECTION("a full disk (/dev/full, through a link)") {
        fs::create_symlink("/dev/full", dir / "full.json");
        const auto r = run_cudaconv(
            {"in", "-f", "edge", "-o", "out/", "--json", "full.json", "--overwrite"}, dir.path());
        INFO(r.err);
        CHECK(r.exit_code == 1);
        CHECK(count(r.err, "error:") == 1);
        CHECK_THAT(r.err, Catch::Contains("full.json: cannot write: No space left on device"));
        CHECK_THAT(r.err, Catch::Contains("done 3, skipped 0, failed 0 of 3 images"));
        CHECK(fs::is_symlink(dir / "full.json"));
        for (const char* name : {"a.png", "b.png", "c.jpg"}) CHECK(decodes(dir / "out" / name));
    }
    SECTION("--json - into a pipe whose reader has gone (EPIPE)") {
        int ends[2];
        REQUIRE(pipe(ends) == 0);
        close(ends[0]);
        Background run(dir.path(), {"in", "-f", "edge", "-o", "out/", "--json", "-"}, ends[1]);
        close(ends[1]);
        const int status = run.wait();
        const std::string err = run.err();
        INFO(err);
        REQUIRE(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 1);
        CHECK(count(err, "error:") == 1);
        CHECK_THAT(err, Catch::Contains("<stdout> (--json -): cannot write: Broken pipe"));
        for (const char* name : {"a.png", "b.png", "c.jpg"}) CHECK(decodes(dir / "out" / name));
    }
}

TEST_CASE("json: a path that is not UTF-8 is written as U+FFFD, never a crash", "[cli][outputs]") {
    TempDir dir;
    const std::string name = "bad\xff"
                             "name.png";  // a byte no UTF-8 text holds
    copy_sample("camera.png", dir / name);
    const std::string replacement = "\xef\xbf\xbd";  // U+FFFD in UTF-8

    const auto batch = run_cudaconv({name, "-f", "edge", "-o", "out/", "--json", "-"}, dir.path());
    INFO(batch.err);
    CHECK(batch.exit_code == 0);
    const std::vector<std::string> lines = lines_of(batch.out);
    REQUIRE(lines.size() == 2);  // the image's line and the summary
    const auto line = nlohmann::json::parse(lines.front());
    CHECK(line.at("input").get<std::string>() == "bad" + replacement + "name.png");

    const auto compare =
        run_cudaconv({"compare", name, sample("camera.png"), "--json"}, dir.path());
    INFO(compare.err);
    CHECK(compare.exit_code == 0);
    CHECK_NOTHROW(nlohmann::json::parse(lines_of(compare.out).front()));
}

TEST_CASE("templates: an empty {dir} is the output root, never /", "[cli][outputs]") {
    TempDir dir;
    // Names of this test's own, so that a cudaconv that wrongly writes to /
    // neither meets nor leaves anything there.
    const std::string stem = dir.path().filename().string();
    const RemovedAtEnd file_at_root{fs::path("/") / (stem + "-e.png")};
    const RemovedAtEnd top_at_root{fs::path("/") / (stem + "-top-e.png")};
    copy_sample("camera.png", dir / (stem + ".png"));
    copy_sample("camera.png", dir / "tree" / (stem + "-top.png"));
    copy_sample("chelsea.png", dir / "tree" / "sub" / "x.png");

    auto r = run_cudaconv({stem + ".png", "-f", "edge", "-o", "{dir}/{stem}-e.png"}, dir.path());
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(decodes(dir / (stem + "-e.png")));
    CHECK_FALSE(fs::exists(file_at_root.path));

    r = run_cudaconv({"tree", "-r", "-f", "edge", "-o", "{dir}/{stem}-e.png"}, dir.path());
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(decodes(dir / (stem + "-top-e.png")));
    CHECK(decodes(dir / "sub" / "x-e.png"));
    CHECK_FALSE(fs::exists(top_at_root.path));
}

TEST_CASE("templates: a {dir} or {stem} holding .. is refused, a literal .. is the user's",
          "[cli][outputs]") {
    TempDir dir;
    copy_sample("camera.png", dir / "top.png");
    fs::create_directories(dir / "in" / "a");

    SECTION("{dir} from a pattern that climbs out of its root") {
        const auto r = run_cudaconv(
            {"in/*/../../top.png", "-f", "edge", "-o", "out/{dir}/{stem}-e.png"}, dir.path());
        INFO(r.err);
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Contains("in/a/../../top.png: -o \"out/{dir}/{stem}-e.png\" "
                                          "would write top-e.png, outside out"));
        CHECK(count(r.err, "\n") == 1);
        CHECK_FALSE(fs::exists(dir / "top-e.png"));
        CHECK_FALSE(fs::exists(dir / "out"));
    }
    SECTION("{stem} that is .. (an input named ...)") {
        copy_sample("camera.png", dir / "...");
        const auto r = run_cudaconv({"...", "-f", "edge", "-o", "out/{stem}/e.png"}, dir.path());
        INFO(r.err);
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Contains("would write e.png, outside out"));
        CHECK_FALSE(fs::exists(dir / "e.png"));
        CHECK_FALSE(fs::exists(dir / "out"));
    }
    SECTION("a literal .. in -o") {
        fs::create_directories(dir / "work");
        const auto r =
            run_cudaconv({"../top.png", "-f", "edge", "-o", "../res/{stem}.png"}, dir / "work");
        INFO(r.err);
        CHECK(r.exit_code == 0);
        CHECK(decodes(dir / "res" / "top.png"));
    }
}

TEST_CASE("outputs: folders made for outputs that none went into are taken away",
          "[cli][outputs]") {
    TempDir dir;
    copy_sample("camera-crop.png", dir / "in" / "good.png");
    std::ofstream(dir / "in" / "bad.png", std::ios::binary) << "\x89PNG\r\n\x1a\n broken";
    // Each input into a folder of its own: the good one's stays, the bad one's goes.
    auto r = run_cudaconv({"in", "-f", "edge", "-o", "out/{stem}/{stem}.png"}, dir.path());
    INFO(r.err);
    CHECK(r.exit_code == 1);
    CHECK(fs::exists(dir / "out" / "good" / "good.png"));
    CHECK_FALSE(fs::exists(dir / "out" / "bad"));
    // Nothing written at all: not even the root the output named.
    r = run_cudaconv({"in/bad.png", "-f", "edge", "-o", "none/a/"}, dir.path());
    CHECK(r.exit_code == 1);
    CHECK_FALSE(fs::exists(dir / "none"));
    // A folder that was there already stays, empty or not.
    fs::create_directory(dir / "kept");
    r = run_cudaconv({"in/bad.png", "-f", "edge", "-o", "kept/"}, dir.path());
    CHECK(r.exit_code == 1);
    CHECK(fs::is_directory(dir / "kept"));
}

TEST_CASE("outputs: -o NAME/ where NAME is a file says so", "[cli][outputs]") {
    TempDir dir;
    copy_sample("camera.png", dir / "a.png");
    const auto r = run_cudaconv({"a.png", "-f", "edge", "-o", "a.png/"}, dir.path());
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.err, Catch::Contains("a.png/a.png: cannot write: a.png is a file, not a folder"));
    CHECK(count(r.err, "\n") == 1);
    CHECK(dir.entries() == std::vector<std::string>{"a.png"});
}

TEST_CASE("outputs: -f none refuses the options that shape a filter's result, warns of -k",
          "[cli][outputs]") {
    TempDir dir;
    copy_sample("chelsea-alpha.png", dir / "in.png");
    struct Case {
        std::vector<std::string> options;
        const char* message;
    };
    const std::vector<Case> refused{
        {{"--border", "wrap"}, "--border needs a filter"},
        {{"--border-value", "3"}, "--border-value needs a filter"},
        {{"--anchor", "0,0"}, "--anchor needs a filter"},
        {{"--flip"}, "--flip needs a filter"},
        {{"--scale", "2", "--delta", "1", "--abs"}, "--scale, --delta, --abs need a filter"},
        {{"--normalize"}, "--normalize needs a filter"},
        {{"--depth", "u16"}, "--depth needs a filter"},
        {{"--alpha", "filter"}, "--alpha needs a filter"},
    };
    for (const Case& c : refused) {
        std::vector<std::string> args{"in.png", "-f", "none", "-o", "n.png"};
        args.insert(args.end(), c.options.begin(), c.options.end());
        const auto r = run_cudaconv(args, dir.path());
        INFO(c.options[0] << ": " << r.err);
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Contains(c.message) && Catch::Contains("-f identity applies"));
        CHECK_FALSE(fs::exists(dir / "n.png"));
    }
    const auto r = run_cudaconv(
        {"in.png", "-f", "none", "-k", "cpu", "--repeat", "3", "--warmup", "1", "-o", "n.png"},
        dir.path());
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.err, Catch::Contains(
                          "warning: -f none runs no filter: -k cpu, --repeat, --warmup ignored"));
    CHECK(decodes(dir / "n.png"));
}

TEST_CASE(
    "outputs: --format sets stdout's format and stdin's {ext}, with a file output it is refused",
    "[cli][outputs]") {
    TempDir dir;
    copy_sample("camera.png", dir / "in.png");
    auto r = run_cudaconv({"in.png", "-f", "edge", "--format", "jpg", "-o", "x.png"}, dir.path());
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("--format jpg sets the format of stdout (-o -) and stdin's "
                                      "{ext} only"));
    CHECK_FALSE(fs::exists(dir / "x.png"));

    r = run_cudaconv({"in.png", "-f", "edge", "--format", "jpg", "-o", "-"}, dir.path());
    CHECK(r.exit_code == 0);
    CHECK(r.out.substr(0, 3) == "\xff\xd8\xff");  // a JPEG

    r = run_cudaconv({"-", "-f", "edge", "--format", "jpg", "-o", "out/{stem}.{ext}"}, dir.path(),
                     read_bytes(dir / "in.png"));
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(decodes(dir / "out" / "stdin.jpg"));
}

// A mismatch known before decoding is a usage error (2); one that only the
// decoded image shows fails that input (1).
TEST_CASE("exit codes: a format mismatch known before decoding is 2, after decoding 1",
          "[cli][outputs]") {
    TempDir dir;
    copy_sample("camera.png", dir / "gray.png");
    copy_sample("chelsea.png", dir / "rgb.png");
    struct Case {
        std::vector<std::string> args;
        int exit_code;
        const char* message;
    };
    const std::vector<Case> cases{
        {{"gray.png", "-f", "edge", "-o", "x.pfm"}, 1, "x.pfm: PFM holds 32-bit float samples"},
        {{"rgb.png", "-f", "edge", "-o", "x.pgm"}, 1, "x.pgm: PGM holds 1 channel"},
        {{"gray.png", "-f", "edge", "--depth", "u8", "-o", "x.pfm"}, 2, "x.pfm: PFM holds"},
        {{"gray.png", "-f", "edge", "--depth", "f32", "-o", "x.png"}, 2, "x.png: PNG holds"},
        {{"gray.png", "-f", "edge", "--depth", "u16", "-o", "x.jpg"}, 2, "x.jpg: JPEG holds"},
    };
    for (const Case& c : cases) {
        const auto r = run_cudaconv(c.args, dir.path());
        INFO(c.args.back() << ": " << r.err);
        CHECK(r.exit_code == c.exit_code);
        CHECK_THAT(r.err, Catch::Contains(c.message));
        CHECK_FALSE(fs::exists(dir / c.args.back()));
    }
}

TEST_CASE("bench --csv/--json FILE: an existing file is kept unless --overwrite",
          "[cli][outputs][bench]") {
    TempDir dir;
    const std::vector<std::string> bench{"bench", "--size",   "8x8",     "-f", "edge",
                                         "-k",    "cpu",      "--depth", "u8", "--warmup",
                                         "0",     "--repeat", "1",       "-q"};
    auto with = [&bench](std::vector<std::string> extra) {
        std::vector<std::string> args = bench;
        args.insert(args.end(), extra.begin(), extra.end());
        return args;
    };
    write_file(dir / "b.json", "old");
    write_file(dir / "b.csv", "old");

    auto r = run_cudaconv(with({"--json", "b.json"}), dir.path());
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("--json b.json: exists already; nothing was done "
                                      "(--overwrite replaces it)"));
    CHECK(read_bytes(dir / "b.json") == "old");

    r = run_cudaconv(with({"--csv", "b.csv"}), dir.path());
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("--csv b.csv: exists already"));
    CHECK(read_bytes(dir / "b.csv") == "old");

    r = run_cudaconv(with({"--csv", "same", "--json", "./same"}), dir.path());
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("--csv and --json both name same"));
    CHECK_FALSE(fs::exists(dir / "same"));

    r = run_cudaconv(with({"--json", "b.json", "--csv", "b.csv", "--overwrite"}), dir.path());
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(nlohmann::json::parse(read_bytes(dir / "b.json"))["results"].size() == 1);
    CHECK_THAT(read_bytes(dir / "b.csv"), Catch::StartsWith("variant,"));
    CHECK(dir.entries() == std::vector<std::string>{"b.csv", "b.json"});  // no temporary file
}

TEST_CASE("compare --diff: an input or an existing file is kept unless --overwrite",
          "[cli][outputs][compare]") {
    TempDir dir;
    copy_sample("camera.png", dir / "a.png");
    cv::Mat changed = cv::imread(sample("camera.png"), cv::IMREAD_UNCHANGED);
    changed.at<std::uint8_t>(5, 7) ^= 0xff;
    REQUIRE(cv::imwrite((dir / "b.png").string(), changed));

    SECTION("one pair") {
        write_file(dir / "heat.png", "old");
        auto r = run_cudaconv({"compare", "a.png", "b.png", "--diff", "heat.png"}, dir.path());
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Contains("--diff heat.png: exists already; nothing was compared "
                                          "(--overwrite replaces it)"));
        CHECK(read_bytes(dir / "heat.png") == "old");

        r = run_cudaconv({"compare", "a.png", "b.png", "--diff", "heat.png", "--overwrite"},
                         dir.path());
        CHECK(r.exit_code == 1);  // they differ
        CHECK(decodes(dir / "heat.png"));
    }
    SECTION("folders: a heat map that would replace an input, or one that exists") {
        // A/x.png differs from B/x.png; its heat map would be A/sub/x.png,
        // which is itself compared.
        copy_sample("camera.png", dir / "A" / "x.png");
        copy_sample("camera.png", dir / "A" / "sub" / "x.png");
        fs::create_directories(dir / "B" / "sub");
        fs::copy_file(dir / "b.png", dir / "B" / "x.png");
        copy_sample("camera.png", dir / "B" / "sub" / "x.png");
        const std::string a_sub = read_bytes(dir / "A" / "sub" / "x.png");
        auto r = run_cudaconv({"compare", "A", "B", "--diff", "A/sub"}, dir.path());
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Contains("--diff A/sub/x.png: would overwrite an input"));
        CHECK(read_bytes(dir / "A" / "sub" / "x.png") == a_sub);

        write_file(dir / "D" / "sub" / "x.png", "old");
        r = run_cudaconv({"compare", "A", "B", "--diff", "D"}, dir.path());
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Contains("--diff D: 1 heat map exists already (D/sub/x.png)"));
        CHECK(read_bytes(dir / "D" / "sub" / "x.png") == "old");

        r = run_cudaconv({"compare", "A", "B", "--diff", "D", "--overwrite"}, dir.path());
        CHECK(r.exit_code == 1);
        CHECK(decodes(dir / "D" / "x.png"));
    }
}

}  // namespace cudaconv::test

namespace cudaconv::test {

// RGBA and 16-bit images written as JPEG: converted as ImageMagick does,
// with one note a run, to the bytes OpenCV's imwrite gives the converted
// image (the CPU writer's, at 4:2:0).
TEST_CASE("outputs: RGBA and 16-bit images are converted for a JPEG output", "[cli][outputs]") {
    TempDir dir;
    copy_sample("chelsea-alpha.png", dir / "in" / "rgba.png");
    copy_sample("camera-16bit.png", dir / "in" / "wide.png");
    const auto r = run_cudaconv(
        {"in", "-f", "identity", "-k", "cpu", "--background", "#102030", "-o", "out/{stem}.jpg"},
        dir.path());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);  // one note for both
    CHECK_THAT(r.err, Catch::Contains("info: in/") && Catch::Contains(": written as JPEG with ") &&
                          Catch::Contains("others like it are too"));

    // The expected images, computed here: alpha over #102030, v / 257.
    const cv::Mat rgba = cv::imread(sample("chelsea-alpha.png"), cv::IMREAD_UNCHANGED);
    REQUIRE(rgba.type() == CV_8UC4);
    cv::Mat flat(rgba.rows, rgba.cols, CV_8UC3);
    const double bg[3] = {0x30, 0x20, 0x10};  // BGR
    for (int y = 0; y < rgba.rows; ++y) {
        for (int x = 0; x < rgba.cols; ++x) {
            const cv::Vec4b p = rgba.at<cv::Vec4b>(y, x);
            for (int c = 0; c < 3; ++c) {
                flat.at<cv::Vec3b>(y, x)[c] =
                    cv::saturate_cast<std::uint8_t>((p[c] * p[3] + bg[c] * (255.0 - p[3])) / 255.0);
            }
        }
    }
    const cv::Mat wide = cv::imread(sample("camera-16bit.png"), cv::IMREAD_UNCHANGED);
    REQUIRE(wide.depth() == CV_16U);
    cv::Mat narrow;
    wide.convertTo(narrow, CV_8U, 1.0 / 257.0);
    for (const auto& [name, expected] :
         std::vector<std::pair<std::string, cv::Mat>>{{"rgba", flat}, {"wide", narrow}}) {
        INFO(name);
        std::vector<std::uint8_t> bytes;
        REQUIRE(cv::imencode(".jpg", expected, bytes, {cv::IMWRITE_JPEG_QUALITY, 95}));
        CHECK(read_bytes(dir / "out" / (name + ".jpg")) == std::string(bytes.begin(), bytes.end()));
    }

    // An explicit 16-bit depth is still refused before any work, and
    // float samples after decoding: their range is the user's to say.
    const auto u16 = run_cudaconv(
        {"in/wide.png", "-f", "identity", "--depth", "u16", "-o", "x.jpg"}, dir.path());
    CHECK(u16.exit_code == 2);
    copy_sample("camera-crop-f32.pfm", dir / "f.pfm");
    const auto f32 = run_cudaconv({"f.pfm", "-f", "identity", "-o", "f.jpg"}, dir.path());
    CHECK(f32.exit_code == 1);
    CHECK_THAT(f32.err, Catch::Contains("f.jpg: JPEG holds 8-bit samples"));
    CHECK(run_cudaconv({"in/rgba.png", "-f", "identity", "--background", "pink", "-o", "p.jpg"},
                       dir.path())
              .exit_code == 2);
}

// A white or black output by a likely mistake gets one warning with the
// fix; pictures do not.
TEST_CASE("outputs: a saturated or flattened output is warned of, once", "[cli][outputs]") {
    TempDir dir;
    copy_sample("chelsea.png", dir / "in" / "a.png");
    copy_sample("camera.png", dir / "in" / "b.png");
    copy_sample("camera-crop-f32.pfm", dir / "f.pfm");  // samples in [0, 1]
    const auto sixteen = run_cudaconv(
        {"in", "-f", "3x3:1,2,1,2,4,2,1,2,1", "-k", "cpu", "-o", "white/"}, dir.path());
    INFO(sixteen.err);
    CHECK(sixteen.exit_code == 0);
    CHECK(std::count(sixteen.err.begin(), sixteen.err.end(), '\n') == 1);
    CHECK_THAT(sixteen.err, Catch::Contains("warning: in/") &&
                                Catch::Contains("% of the samples saturate at 255: the filter's "
                                                "taps sum to 16 (--normalize divides"));
    CHECK(fs::exists(dir / "white" / "a.png"));  // written all the same

    const auto unit =
        run_cudaconv({"f.pfm", "-f", "identity", "--depth", "u8", "-o", "f.png"}, dir.path());
    CHECK(unit.exit_code == 0);
    CHECK_THAT(unit.err, Catch::Contains("warning: f.pfm: every sample is 0 or 1: a float image "
                                         "in [0, 1] written as integers? --scale 255"));

    for (const std::vector<std::string>& ok :
         {std::vector<std::string>{"in", "-f", "edge", "-o", "edge/"},
          {"in", "-f", "gaussian:sigma=2", "-o", "blur/"},
          {"in", "-f", "3x3:1,2,1,2,4,2,1,2,1", "--normalize", "-o", "norm/"},
          {"f.pfm", "-f", "identity", "--depth", "u8", "--scale", "255", "-o", "f255.png"}}) {
        const auto r = run_cudaconv(ok, dir.path());
        INFO(ok.back() << ": " << r.err);
        CHECK(r.exit_code == 0);
        CHECK(r.err.empty());
    }
}

}  // namespace cudaconv::test

namespace cudaconv::test {

namespace {

// A 3x3 [1 2 1]x[1 2 1]/16 blur of premultiplied colour, divided by the
// blurred alpha, with reflect101 borders: --alpha premultiply's result,
// computed here in double from its definition.
cv::Mat premultiplied_blur_reference(const cv::Mat& bgra) {
    const int w[3] = {1, 2, 1};
    const auto reflect = [](int i, int n) { return i < 0 ? -i : i >= n ? 2 * n - 2 - i : i; };
    cv::Mat out(bgra.size(), CV_8UC4);
    for (int y = 0; y < bgra.rows; ++y) {
        for (int x = 0; x < bgra.cols; ++x) {
            double sum[4] = {0, 0, 0, 0};
            for (int dy = -1; dy <= 1; ++dy) {
                for (int dx = -1; dx <= 1; ++dx) {
                    const cv::Vec4b p =
                        bgra.at<cv::Vec4b>(reflect(y + dy, bgra.rows), reflect(x + dx, bgra.cols));
                    const double weight = w[dy + 1] * w[dx + 1] / 16.0;
                    for (int c = 0; c < 3; ++c) sum[c] += weight * p[c] * p[3] / 255.0;
                    sum[3] += weight * p[3];
                }
            }
            for (int c = 0; c < 3; ++c) {
                out.at<cv::Vec4b>(y, x)[c] =
                    cv::saturate_cast<std::uint8_t>(sum[3] > 0 ? sum[c] / sum[3] * 255.0 : 0.0);
            }
            out.at<cv::Vec4b>(y, x)[3] = cv::saturate_cast<std::uint8_t>(sum[3]);
        }
    }
    return out;
}

}  // namespace

// The logo: opaque colour beside transparent black. keep darkens
// the edge; premultiply keeps its colour and lowers its alpha.
TEST_CASE("outputs: --alpha premultiply keeps colours to a transparent edge", "[cli][outputs]") {
    TempDir dir;
    cv::Mat logo(16, 24, CV_8UC4, cv::Scalar(0, 0, 0, 0));
    logo.colRange(0, 12).setTo(cv::Scalar(68, 42, 255, 255));
    cv::Mat noisy(19, 23, CV_8UC4);
    cv::randu(noisy, 0, 256);
    REQUIRE(cv::imwrite((dir / "logo.png").string(), logo));
    REQUIRE(cv::imwrite((dir / "noisy.png").string(), noisy));
    const std::string blur = "3x3:1,2,1,2,4,2,1,2,1";
    for (const char* kernel : {"cpu", "cpu-ref"}) {
        INFO(kernel);
        for (const char* alpha : {"keep", "premultiply"}) {
            const auto r =
                run_cudaconv({"logo.png", "noisy.png", "-f", blur, "--normalize", "-k", kernel,
                              "--alpha", alpha, "-o", std::string(alpha) + "-" + kernel + "/"},
                             dir.path());
            INFO(r.err);
            REQUIRE(r.exit_code == 0);
        }
        const auto read = [&](const std::string& path) {
            return cv::imread((dir / path).string(), cv::IMREAD_UNCHANGED);
        };
        const cv::Mat kept = read(std::string("keep-") + kernel + "/logo.png");
        const cv::Mat pre = read(std::string("premultiply-") + kernel + "/logo.png");
        // Column 11: opaque, beside the transparent half.
        CHECK(kept.at<cv::Vec4b>(8, 11) == cv::Vec4b(51, 32, 191, 255));  // darkened, opaque
        CHECK(pre.at<cv::Vec4b>(8, 11) == cv::Vec4b(68, 42, 255, 191));   // its colour, 3/4 alpha
        CHECK(pre.at<cv::Vec4b>(8, 12) == cv::Vec4b(68, 42, 255, 64));
        CHECK(pre.at<cv::Vec4b>(8, 20) == cv::Vec4b(0, 0, 0, 0));

        const cv::Mat expected = premultiplied_blur_reference(noisy);
        const cv::Mat got = read(std::string("premultiply-") + kernel + "/noisy.png");
        REQUIRE(got.type() == CV_8UC4);
        // Float sums divided by a small alpha may round the other way.
        CHECK(cv::norm(got, expected, cv::NORM_INF) <= 1);
    }
    const auto refused = run_cudaconv(
        {"logo.png", "-f", blur, "--alpha", "premultiply", "--scale", "2", "-o", "x.png"},
        dir.path());
    CHECK(refused.exit_code == 2);
    CHECK_THAT(refused.err, Catch::Contains("--alpha premultiply divides each colour"));
}

}  // namespace cudaconv::test

namespace cudaconv::test {

// --alpha premultiply on the CUDA variants: the same float32 job, within 1
// of cpu-ref's output.
TEST_CASE("outputs: --alpha premultiply on CUDA variants agrees with cpu-ref",
          "[cli][outputs][gpu]") {
    if (skip_without_device()) return;
    TempDir dir;
    copy_sample("chelsea-alpha.png", dir / "a.png");
    const auto run = [&](const std::string& kernel) {
        const auto r = run_cudaconv({"a.png", "-f", "gaussian:sigma=2", "-k", kernel, "--alpha",
                                     "premultiply", "-o", kernel + ".png"},
                                    dir.path());
        INFO(kernel << ": " << r.err);
        REQUIRE(r.exit_code == 0);
        return cv::imread((dir / (kernel + ".png")).string(), cv::IMREAD_UNCHANGED);
    };
    const cv::Mat reference = run("cpu-ref");
    for (const char* kernel : {"naive", "separable", "fast", "fast-separable"}) {
        INFO(kernel);
        const cv::Mat got = run(kernel);
        REQUIRE(got.type() == reference.type());
        CHECK(cv::norm(got, reference, cv::NORM_INF) <= 1);
    }
}

}  // namespace cudaconv::test
