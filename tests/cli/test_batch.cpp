// Batches as users run them from scripts: folders, trees, patterns, lists,
// existing outputs, failures in the middle, and Ctrl-C.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include "kernels/codecs/gpu_jpeg_encoder.hpp"
#include "kernels/runtime/device_info.hpp"
#include "support/files.hpp"
#include "support/json_lines.hpp"
#include "support/run_command.hpp"

namespace cudaconv::test {
namespace fs = std::filesystem;

namespace {

// Every file under root, relative, sorted: what a run left behind,
// temporary files included.
std::vector<std::string> tree(const fs::path& root) {
    std::vector<std::string> files;
    if (!fs::exists(root)) return files;
    for (const auto& e : fs::recursive_directory_iterator(root)) {
        if (e.is_regular_file())
            files.push_back(e.path().lexically_relative(root).generic_string());
    }
    std::sort(files.begin(), files.end());
    return files;
}

bool decodes(const fs::path& p) { return !cv::imread(p.string(), cv::IMREAD_UNCHANGED).empty(); }

// in/a.png, in/b.png (corrupt), in/c.jpg: the failing one in the middle.
void make_flat_folder(const fs::path& in) {
    copy_sample("camera.png", in / "a.png");
    std::string corrupt = read_bytes(sample("chelsea.png"));
    corrupt.resize(corrupt.size() / 3);
    write_file(in / "b.png", corrupt);
    copy_sample("rocket.jpg", in / "c.jpg");
}

}  // namespace

TEST_CASE("batch: a corrupt file in the middle is reported and the rest are written",
          "[cli][batch]") {
    TempDir dir;
    make_flat_folder(dir / "in");
    const auto r = run_cudaconv({"in", "-f", "edge", "-j", "2", "-o", "out/"}, dir.path());
    INFO(r.err);
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.err, Catch::Contains("error: in/b.png:"));
    CHECK_THAT(r.err, Catch::Contains("done 2, skipped 0, failed 1 of 3 images"));
    CHECK(tree(dir / "out") == std::vector<std::string>{"a.png", "c.jpg"});
    CHECK(decodes(dir / "out" / "a.png"));
    CHECK(decodes(dir / "out" / "c.jpg"));
}

// The pipeline numbers only the images it runs; an image that fails late
// (while writing) must still be reported under its own name when an
// earlier input was skipped.
TEST_CASE("batch: a write failure after a skipped input names the right input", "[cli][batch]") {
    TempDir dir;
    copy_sample("camera.png", dir / "in" / "a.png");
    copy_sample("chelsea.png", dir / "in" / "b.png");
    // c: a PNG wider than JPEG allows (65500), so only its encoder fails.
    fs::create_directories(dir / "in");
    REQUIRE(
        cv::imwrite((dir / "in" / "c.png").string(), cv::Mat(1, 70000, CV_8UC1, cv::Scalar(9))));
    write_file(dir / "out" / "a.jpg", "kept");  // a: skipped
    const auto r = run_cudaconv(
        {"in", "-f", "edge", "--skip-existing", "-o", "out/{stem}.jpg", "--json", "-"}, dir.path());
    INFO(r.err);
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.err, Catch::Contains("error: out/c.jpg: cannot encode JPEG"));
    // The JSON line of the failure names c, the input that failed.
    bool failure_line = false;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
        const auto j = nlohmann::json::parse(line);
        if (j.value("status", "") == "failed") {
            failure_line = true;
            CHECK(j.value("input", "") == "in/c.png");
        }
    }
    CHECK(failure_line);
    CHECK_THAT(r.err, Catch::Contains("done 1, skipped 1, failed 1 of 3 images"));
    CHECK(read_bytes(dir / "out" / "a.jpg") == "kept");
    CHECK(decodes(dir / "out" / "b.jpg"));
    CHECK(tree(dir / "out") == std::vector<std::string>{"a.jpg", "b.jpg"});  // no temp file
}

// With -k auto, {kernel} names an output only once the image is decoded and
// the variant chosen: --skip-existing and the default refusal still hold.
TEST_CASE("batch: {kernel} outputs of -k auto honour --skip-existing", "[cli][batch]") {
    TempDir dir;
    copy_sample("camera.png", dir / "in" / "a.png");
    copy_sample("chelsea.png", dir / "in" / "b.png");
    const std::vector<std::string> args{
        "in", "-f", "edge", "-k", "auto", "-o", "out/{stem}-{kernel}.png"};
    const auto first = run_cudaconv(args, dir.path());
    INFO(first.err);
    REQUIRE(first.exit_code == 0);
    const std::vector<std::string> written = tree(dir / "out");
    REQUIRE(written.size() == 2);

    auto skip_args = args;
    skip_args.push_back("--skip-existing");
    skip_args.push_back("-v");  // the summary of a clean batch is a -v line
    const auto again = run_cudaconv(skip_args, dir.path());
    INFO(again.err);
    CHECK(again.exit_code == 0);
    CHECK_THAT(again.err, Catch::Contains("done 0, skipped 2, failed 0 of 2 images"));

    const auto refused = run_cudaconv(args, dir.path());
    INFO(refused.err);
    CHECK(refused.exit_code == 1);
    CHECK_THAT(refused.err, Catch::Contains("exists already"));
    CHECK(tree(dir / "out") == written);  // nothing new, no temp file
}

TEST_CASE("batch: an unwritable output fails that image only", "[cli][batch]") {
    TempDir dir;
    copy_sample("camera.png", dir / "in" / "a.png");
    copy_sample("chelsea.png", dir / "in" / "b.png");
    copy_sample("rocket.jpg", dir / "in" / "c.jpg");
    // A folder where b's output goes: no rename can replace it, root or not.
    fs::create_directories(dir / "out" / "b.png");
    const auto r = run_cudaconv({"in", "-f", "edge", "--overwrite", "-o", "out/"}, dir.path());
    INFO(r.err);
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.err, Catch::Contains("out/b.png: is a directory"));
    CHECK_THAT(r.err, Catch::Contains("done 2, skipped 0, failed 1"));
    CHECK(decodes(dir / "out" / "a.png"));
    CHECK(decodes(dir / "out" / "c.jpg"));
    CHECK(tree(dir / "out") == std::vector<std::string>{"a.png", "c.jpg"});  // no temp file

    if (geteuid() != 0) {  // permissions do not stop root
        fs::create_directories(dir / "ro");
        fs::permissions(dir / "ro", fs::perms::owner_read | fs::perms::owner_exec);
        const auto ro = run_cudaconv({"in", "-f", "edge", "-o", "ro/"}, dir.path());
        fs::permissions(dir / "ro", fs::perms::owner_all);
        CHECK(ro.exit_code == 1);
        CHECK_THAT(ro.err, Catch::Contains("ro/a.png: cannot write: Permission denied"));
        CHECK_THAT(ro.err, Catch::Contains("failed 3"));
        CHECK(tree(dir / "ro").empty());
    }
}

TEST_CASE("batch: -r with {dir} or a folder output mirrors the tree", "[cli][batch]") {
    TempDir dir;
    copy_sample("camera.png", dir / "in" / "top.png");
    copy_sample("chelsea.png", dir / "in" / "x" / "mid.png");
    copy_sample("rocket.jpg", dir / "in" / "x" / "y" / "deep.jpg");
    copy_sample("camera.png", dir / "in" / ".cache" / "hidden.png");  // hidden: left out
    write_file(dir / "in" / "x" / "notes.txt", "not an image");       // not an image: left out

    auto r =
        run_cudaconv({"in", "-r", "-f", "edge", "-o", "t/{dir}/{stem}-{filter}.png"}, dir.path());
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(tree(dir / "t") ==
          std::vector<std::string>{"top-edge.png", "x/mid-edge.png", "x/y/deep-edge.png"});

    r = run_cudaconv({"in", "-r", "-f", "edge", "-o", "f/"}, dir.path());
    CHECK(r.exit_code == 0);
    CHECK(tree(dir / "f") == std::vector<std::string>{"top.png", "x/mid.png", "x/y/deep.jpg"});

    // Without -r only the folder's own images.
    r = run_cudaconv({"in", "-f", "edge", "-o", "flat/"}, dir.path());
    CHECK(r.exit_code == 0);
    CHECK(tree(dir / "flat") == std::vector<std::string>{"top.png"});

    // Two inputs for one flat output name: refused before any work.
    copy_sample("camera.png", dir / "in" / "x" / "top.png");
    r = run_cudaconv({"in", "-r", "-f", "edge", "-o", "same/{stem}.png"}, dir.path());
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("would both write same/top.png"));
    CHECK_FALSE(fs::exists(dir / "same"));
}

TEST_CASE("batch: existing outputs are refused before any work, skipped or overwritten",
          "[cli][batch]") {
    TempDir dir;
    copy_sample("camera.png", dir / "in" / "a.png");
    copy_sample("chelsea.png", dir / "in" / "b.png");
    write_file(dir / "out" / "a.png", "old");

    SECTION("default: exit 2, nothing written") {
        const auto r = run_cudaconv({"in", "-f", "edge", "-o", "out/"}, dir.path());
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Contains("1 output exists already: out/a.png"));
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK(tree(dir / "out") == std::vector<std::string>{"a.png"});
        CHECK(read_bytes(dir / "out" / "a.png") == "old");
    }
    SECTION("--skip-existing keeps it and writes the rest") {
        const auto r =
            run_cudaconv({"in", "-f", "edge", "--skip-existing", "-v", "-o", "out/"}, dir.path());
        CHECK(r.exit_code == 0);
        CHECK_THAT(r.err, Catch::Contains("in/a.png: skipped"));
        CHECK_THAT(r.err, Catch::Contains("done 1, skipped 1, failed 0 of 2"));
        CHECK(read_bytes(dir / "out" / "a.png") == "old");
        CHECK(decodes(dir / "out" / "b.png"));
    }
    SECTION("--overwrite replaces it") {
        const auto r = run_cudaconv({"in", "-f", "edge", "--overwrite", "-o", "out/"}, dir.path());
        CHECK(r.exit_code == 0);
        CHECK(decodes(dir / "out" / "a.png"));
        CHECK(decodes(dir / "out" / "b.png"));
    }
    SECTION("both: a usage error") {
        const auto r = run_cudaconv(
            {"in", "-f", "edge", "--overwrite", "--skip-existing", "-o", "out/"}, dir.path());
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Contains("exclude each other"));
        CHECK(read_bytes(dir / "out" / "a.png") == "old");
    }
    SECTION("an output that is an input is refused") {
        const auto r =
            run_cudaconv({"in", "-f", "edge", "--overwrite", "-o", "in/{stem}.{ext}"}, dir.path());
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Contains("would overwrite its input"));
        CHECK(read_bytes(dir / "in" / "a.png") == read_bytes(sample("camera.png")));
    }
}

TEST_CASE("batch: --from a list that cannot be read is a configuration error", "[cli][batch]") {
    TempDir dir;
    const auto r = run_cudaconv({"--from", "missing.txt", "-f", "edge", "-o", "out/"}, dir.path());
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(
                          "--from missing.txt: cannot read the list: No such file or directory"));
    CHECK_FALSE(fs::exists(dir / "out"));
}

TEST_CASE("batch: --from FILE and --from - read one path a line", "[cli][batch]") {
    TempDir dir;
    copy_sample("camera.png", dir / "in" / "a.png");
    copy_sample("chelsea.png", dir / "in" / "b b.png");  // a space: lines are paths, not words
    copy_sample("rocket.jpg", dir / "in" / "c.jpg");
    write_file(dir / "list.txt", "in/a.png\nin/b b.png\n\n");

    auto r = run_cudaconv({"--from", "list.txt", "-f", "edge", "-o", "o1/"}, dir.path());
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(tree(dir / "o1") == std::vector<std::string>{"a.png", "b b.png"});

    r = run_cudaconv({"in/c.jpg", "--from", "-", "-f", "edge", "-o", "o2/"}, dir.path(),
                     "in/a.png\n");
    CHECK(r.exit_code == 0);
    CHECK(tree(dir / "o2") == std::vector<std::string>{"a.png", "c.jpg"});

    r = run_cudaconv({"--from", "missing.txt", "-f", "edge", "-o", "o3/"}, dir.path());
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("missing.txt"));
}

TEST_CASE("batch: quoted patterns are matched by cudaconv", "[cli][batch]") {
    TempDir dir;
    copy_sample("camera.png", dir / "in" / "a.png");
    copy_sample("chelsea.png", dir / "in" / "b.png");
    copy_sample("rocket.jpg", dir / "in" / "c.jpg");
    copy_sample("camera.png", dir / "in" / "d1" / "e.png");

    auto r = run_cudaconv({"in/*.png", "-f", "edge", "-o", "p/"}, dir.path());
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(tree(dir / "p") == std::vector<std::string>{"a.png", "b.png"});

    // {dir} is relative to the pattern's fixed part.
    r = run_cudaconv({"in/d?/*.png", "-f", "edge", "-o", "q/{dir}/{stem}.png"}, dir.path());
    CHECK(r.exit_code == 0);
    CHECK(tree(dir / "q") == std::vector<std::string>{"d1/e.png"});

    r = run_cudaconv({"in/*.webp", "-f", "edge", "-o", "r/"}, dir.path());
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("in/*.webp"));
    CHECK_FALSE(fs::exists(dir / "r"));
}

TEST_CASE("batch: --json - streams a line per image and a summary", "[cli][batch]") {
    TempDir dir;
    make_flat_folder(dir / "in");
    copy_sample("camera.png", dir / "in" / "z.png");
    write_file(dir / "out" / "z.png", "old");
    const auto r = run_cudaconv(
        {"in", "-f", "edge", "--skip-existing", "--json", "-", "-q", "-o", "out/"}, dir.path());
    CHECK(r.exit_code == 1);
    std::istringstream lines(r.out);
    std::string line;
    std::map<std::string, std::string> status;
    nlohmann::json summary;
    while (std::getline(lines, line)) {
        const auto j = nlohmann::json::parse(line);
        if (j.contains("summary")) {
            summary = j;
        } else {
            status[j["input"]] = j["status"];
            if (j["status"] == "done") {
                // When it ran, from the batch's start, and the variant's run.
                const double start = j["batch_ms"]["start"].get<double>();
                const double end = j["batch_ms"]["end"].get<double>();
                CHECK(start >= 0.0);
                CHECK(end > start);
                CHECK(end - start == Approx(j["timings_ms"]["total"].get<double>()).margin(1e-6));
                CHECK(j["timings_ms"]["run"].get<double>() > 0.0);
                CHECK(j["timings_ms"]["run"].get<double>() <= end - start);
            }
        }
    }
    CHECK(status == std::map<std::string, std::string>{{"in/a.png", "done"},
                                                       {"in/b.png", "failed"},
                                                       {"in/c.jpg", "done"},
                                                       {"in/z.png", "skipped"}});
    CHECK(summary["done"] == 2);
    CHECK(summary["failed"] == 1);
    CHECK(summary["skipped"] == 1);
    CHECK(summary["total"] == 4);
    CHECK(summary["images_per_s"].get<double>() > 0.0);
}

TEST_CASE("batch: -f none decodes and encodes only", "[cli][batch]") {
    TempDir dir;
    const auto r = run_cudaconv({sample("camera.png"), "-f", "none", "-o", "o.png"}, dir.path());
    CHECK(r.exit_code == 0);
    const cv::Mat in = cv::imread(sample("camera.png"), cv::IMREAD_UNCHANGED);
    const cv::Mat out = cv::imread((dir / "o.png").string(), cv::IMREAD_UNCHANGED);
    REQUIRE(out.size() == in.size());
    CHECK(cv::norm(in, out, cv::NORM_INF) == 0.0);
}

// --in-flight bounds the images held at once; any bound of 1 or more
// finishes the batch with the same outputs, and 0 is refused before work.
TEST_CASE("batch: --in-flight bounds the images held, and 0 is refused", "[cli][batch]") {
    TempDir dir;
    make_flat_folder(dir / "in");
    for (const std::string bound : {"1", "2", "64"}) {
        const auto r = run_cudaconv(
            {"in", "-f", "edge", "-j", "2", "--in-flight", bound, "-o", "out-" + bound + "/"},
            dir.path());
        INFO(bound << ": " << r.err);
        CHECK(r.exit_code == 1);  // b.png is corrupt
        CHECK_THAT(r.err, Catch::Contains("done 2, skipped 0, failed 1 of 3 images"));
        CHECK(tree(dir / ("out-" + bound)) == std::vector<std::string>{"a.png", "c.jpg"});
    }
    const cv::Mat one = cv::imread((dir / "out-1" / "a.png").string(), cv::IMREAD_UNCHANGED);
    const cv::Mat many = cv::imread((dir / "out-64" / "a.png").string(), cv::IMREAD_UNCHANGED);
    CHECK(cv::norm(one, many, cv::NORM_INF) == 0.0);

    const auto zero =
        run_cudaconv({"in", "-f", "edge", "--in-flight", "0", "-o", "z/"}, dir.path());
    CHECK(zero.exit_code == 2);
    CHECK_THAT(zero.err, Catch::Contains("--in-flight"));
    CHECK_FALSE(fs::exists(dir / "z"));
}

// On a terminal the batch draws one progress line on stderr, redrawn in
// place (count, share, bar, images/s, ETA) and cleared at the end: a batch
// that did all it was asked leaves nothing on the screen. -v adds each
// image's line above the bar, and the summary. `script` (util-linux) gives
// the process a pseudo-terminal.
TEST_CASE("batch: on a terminal a progress line, cleared at the end of a clean batch",
          "[cli][batch]") {
    TempDir dir;
    for (int i = 0; i < 6; ++i)
        copy_sample("camera.png", dir / "in" / ("c" + std::to_string(i) + ".png"));
    const std::string command = cudaconv_binary() + " in -f box:9 -k cpu-ref -j 1 -o out/";
    const auto r = run_program({"script", "-qfec", command, "/dev/null"}, dir.path());
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    const std::string& tty = r.out;  // script copies the terminal's output to stdout
    CHECK_THAT(tty, Catch::Contains("\r6/6  100%  ["));
    CHECK_THAT(tty, Catch::Contains("images/s"));
    CHECK_THAT(tty, Catch::EndsWith("\r\033[K"));    // the line cleared, nothing after it
    CHECK_THAT(tty, !Catch::Contains("cudaconv:"));  // no log line at all
    CHECK(tree(dir / "out").size() == 6);

    const auto verbose =
        run_program({"script", "-qfec", command + " --overwrite -v", "/dev/null"}, dir.path());
    INFO(verbose.out);
    REQUIRE(verbose.exit_code == 0);
    for (int i = 0; i < 6; ++i) {
        const std::string name = "c" + std::to_string(i) + ".png";
        CHECK_THAT(verbose.out, Catch::Contains("in/" + name + " -> out/" + name));
    }
    CHECK_THAT(verbose.out, Catch::Contains("done 6, skipped 0, failed 0 of 6 images"));
}

// A slow batch (cpu-ref, 9x9) in its own process, so that a signal lands
// mid-batch; killed and reaped at the end of the test whatever happens, so
// a failed REQUIRE never leaves it writing into a folder being removed.
class SlowBatch {
public:
    static constexpr int kImages = 24;

    explicit SlowBatch(const fs::path& dir) : dir_(dir) {
        for (int i = 0; i < kImages; ++i) {
            copy_sample("rocket.jpg", dir / "in" / ("img" + std::to_string(100 + i) + ".jpg"));
        }
        const std::string err_path = (dir / "stderr.txt").string();
        const std::string binary = cudaconv_binary();
        pid_ = fork();
        REQUIRE(pid_ >= 0);
        if (pid_ == 0) {  // only async-signal-safe calls until exec
            if (chdir(dir.c_str()) != 0) _exit(127);
            const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            const int null = open("/dev/null", O_WRONLY);
            if (err < 0 || null < 0 || dup2(err, 2) < 0 || dup2(null, 1) < 0) _exit(127);
            execl(binary.c_str(), binary.c_str(), "in", "-f", "box:9", "-k", "cpu-ref", "-j", "2",
                  "-o", "out/{stem}.png", static_cast<char*>(nullptr));
            _exit(127);
        }
    }
    SlowBatch(const SlowBatch&) = delete;
    SlowBatch& operator=(const SlowBatch&) = delete;
    ~SlowBatch() {
        if (pid_ > 0 && !reaped_) {
            kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
        }
    }

    // Once the first output is complete the batch is surely under way.
    void wait_for_first_output() {
        bool started = false;
        while (!started && std::chrono::steady_clock::now() < deadline_) {
            for (const std::string& f : tree(dir_ / "out")) started |= f[0] != '.';
            if (!started) std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        REQUIRE(started);
    }

    void signal(int number) { REQUIRE(kill(pid_, number) == 0); }

    int wait() {  // the wait status
        int status = 0;
        while (waitpid(pid_, &status, WNOHANG) == 0) {
            REQUIRE(std::chrono::steady_clock::now() < deadline_);
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        reaped_ = true;
        return status;
    }

    std::string err() const { return read_bytes(dir_ / "stderr.txt"); }

    // Every output whole, no temporary file left, fewer than all written.
    void check_outputs() const {
        const auto left = tree(dir_ / "out");
        CHECK(left.size() < static_cast<std::size_t>(kImages));  // it did stop early
        for (const std::string& f : left) {
            INFO(f);
            CHECK(f[0] != '.');
            CHECK(decodes(dir_ / "out" / f));
        }
    }

private:
    fs::path dir_;
    pid_t pid_ = -1;
    bool reaped_ = false;
    std::chrono::steady_clock::time_point deadline_ =
        std::chrono::steady_clock::now() + std::chrono::seconds(120);
};

TEST_CASE("batch: SIGINT stops cleanly, leaves no partial file and prints the summary",
          "[cli][batch][signal]") {
    TempDir dir;
    SlowBatch batch(dir.path());
    batch.wait_for_first_output();
    batch.signal(SIGINT);
    const int status = batch.wait();
    const std::string err = batch.err();
    INFO(err);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 130);
    CHECK_THAT(err, Catch::Contains("stopped by SIGINT"));
    // Every planned image is counted, those never started too.
    std::smatch counts;
    REQUIRE(std::regex_search(err, counts,
                              std::regex("done (\\d+), skipped (\\d+), failed (\\d+), not done "
                                         "(\\d+) of (\\d+) images")));
    CHECK(std::stoi(counts[1]) + std::stoi(counts[2]) + std::stoi(counts[3]) +
              std::stoi(counts[4]) ==
          SlowBatch::kImages);
    CHECK(std::stoi(counts[5]) == SlowBatch::kImages);
    batch.check_outputs();
}

TEST_CASE("batch: SIGTERM stops the same way, with exit 143", "[cli][batch][signal]") {
    TempDir dir;
    SlowBatch batch(dir.path());
    batch.wait_for_first_output();
    batch.signal(SIGTERM);
    const int status = batch.wait();
    INFO(batch.err());
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 143);
    batch.check_outputs();
}

// A second Ctrl-C does not wait for the writes under way: it ends the
// process at once, and still no temporary file is left behind.
TEST_CASE("batch: a second SIGINT ends at once and leaves no partial file",
          "[cli][batch][signal]") {
    TempDir dir;
    SlowBatch batch(dir.path());
    batch.wait_for_first_output();
    batch.signal(SIGINT);
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    batch.signal(SIGINT);
    const int status = batch.wait();
    INFO(batch.err());
    // Killed by the second signal, or already finishing from the first.
    CHECK(((WIFSIGNALED(status) && WTERMSIG(status) == SIGINT) ||
           (WIFEXITED(status) && WEXITSTATUS(status) == 130)));
    batch.check_outputs();
}

// --encoder, wherever the images run: each JSON line names the encoder of
// its PNG, the GPU only for an image a CUDA variant filtered; --encoder cpu
// gives the pixels of the default; --encoder gpu under -k auto encodes the
// images auto put on the CPU there, and says so once.
TEST_CASE("batch: --encoder cpu and gpu, and where each image's PNG was encoded",
          "[cli][batch][encoder]") {
    TempDir dir;
    copy_sample("camera.png", dir / "in" / "a.png");
    copy_sample("chelsea-alpha.png", dir / "in" / "b.png");
    copy_sample("camera-16bit.png", dir / "in" / "c.png");
    auto run = [&](const std::string& encoder, const std::string& out) {
        std::vector<std::string> args{"in", "-f", "edge", "--json", "-", "-o", out + "/"};
        if (!encoder.empty()) args.insert(args.end(), {"--encoder", encoder});
        const auto r = run_cudaconv(args, dir.path());
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        const auto lines = json_by_input(r.out);
        REQUIRE(lines.size() == 3);
        for (const auto& [input, line] : lines) {
            INFO(encoder << ": " << input);
            const bool on_cpu = line["variant"].get<std::string>().rfind("cpu", 0) == 0;
            if (encoder == "cpu" || on_cpu) {
                CHECK(line["encoder"] == "cpu");
                CHECK(line["timings_ms"]["png_rows"].get<double>() == 0.0);
            } else {
                CHECK(line["encoder"] == "gpu");
            }
        }
        return r;
    };
    run("", "default");
    run("cpu", "cpu");
    const auto gpu = run("gpu", "gpu");
    if (gpu.out.find("\"encoder\":\"cpu\"") != std::string::npos) {
        CHECK_THAT(gpu.err, Catch::Contains("--encoder gpu: in/") &&
                                Catch::Contains(": encoded by the CPU (auto ran it on cpu)"));
        CHECK(gpu.err.find("encoded by the CPU") == gpu.err.rfind("encoded by the CPU"));  // once
    }
    for (const char* name : {"a.png", "b.png", "c.png"}) {
        INFO(name);
        const cv::Mat fallback =
            cv::imread((dir / "default" / name).string(), cv::IMREAD_UNCHANGED);
        REQUIRE(!fallback.empty());
        for (const char* other : {"cpu", "gpu"}) {
            const cv::Mat m = cv::imread((dir / other / name).string(), cv::IMREAD_UNCHANGED);
            REQUIRE(m.type() == fallback.type());
            CHECK(cv::norm(m, fallback, cv::NORM_INF) == 0);
        }
    }
}

// --pinned-slots sets the page-locked slots of a GPU batch; with a CPU
// variant there is nothing to upload, and any count is accepted.
TEST_CASE("batch: --pinned-slots takes any count from 0", "[cli][batch][pinned]") {
    TempDir dir;
    copy_sample("camera.png", dir / "in" / "a.png");
    copy_sample("chelsea.png", dir / "in" / "b.png");
    for (const char* slots : {"0", "1", "5"}) {
        INFO(slots);
        const auto r = run_cudaconv({"in", "-f", "edge", "-k", "cpu", "--pinned-slots", slots, "-q",
                                     "-o", std::string("out") + slots + "/"},
                                    dir.path());
        INFO(r.err);
        CHECK(r.exit_code == 0);
        CHECK(tree(dir / (std::string("out") + slots)) ==
              std::vector<std::string>{"a.png", "b.png"});
    }
}

// A CUDA variant's PNGs are compressed on the device (kernels/codecs/png_deflate.hpp)
// and the pixels not downloaded, by default and with --encoder gpu: --json
// shows it, and the files hold the same pixels as those the workers
// compress (--encoder cpu), for gray, colour, alpha and 16-bit outputs,
// and as those of inputs uploaded from page-locked slots (--pinned-slots).
TEST_CASE("batch: PNGs of a CUDA variant are compressed on the device, same pixels",
          "[cli][batch][gpu]") {
    const DeviceProbe& probe = probe_devices();
    if (probe.devices.empty()) {
        std::cout << "SKIPPED: no CUDA device (" << probe.problem << ")\n";
        return;
    }
    TempDir dir;
    const fs::path in = dir / "in";
    fs::create_directories(in);
    for (const char* name :
         {"camera.png", "chelsea.png", "chelsea-alpha.png", "camera-16bit.png"}) {
        copy_sample(name, in / name);
    }
    auto run = [&](std::vector<std::string> options, const std::string& out) {
        std::vector<std::string> args{"in",     "-f", "edge", "-k", "naive",
                                      "--json", "-",  "-q",   "-o", out};
        args.insert(args.end(), options.begin(), options.end());
        const auto r = run_cudaconv(args, dir.path());
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        const auto lines = json_by_input(r.out);
        REQUIRE(lines.size() == 4);
        return lines;
    };
    for (const auto& [options, out] : std::vector<std::pair<std::vector<std::string>, std::string>>{
             {{}, "device/{stem}.png"}, {{"--encoder", "gpu"}, "gpu/{stem}.png"}}) {
        for (const auto& [input, line] : run(options, out)) {
            INFO(out << ": " << input);
            CHECK(line["encoder"] == "gpu");
            CHECK(line["timings_ms"]["png_rows"].get<double>() > 0.0);
            CHECK(line["timings_ms"]["download"].get<double>() == 0.0);
        }
    }
    for (const auto& [input, line] : run({"--encoder", "cpu"}, "host/{stem}.png")) {
        INFO(input);
        CHECK(line["encoder"] == "cpu");
        CHECK(line["timings_ms"]["png_rows"].get<double>() == 0.0);
        CHECK(line["timings_ms"]["download"].get<double>() > 0.0);
    }
    // The inputs uploaded from page-locked slots (batch/pinned_slots.hpp),
    // which a batch uses from 16 images by default: 2 slots for these 4.
    run({"--pinned-slots", "2"}, "pinned/{stem}.png");
    for (const char* stem : {"camera", "chelsea", "chelsea-alpha", "camera-16bit"}) {
        INFO(stem);
        const cv::Mat host =
            cv::imread((dir / "host" / stem).string() + ".png", cv::IMREAD_UNCHANGED);
        REQUIRE(!host.empty());
        for (const char* folder : {"device", "gpu", "pinned"}) {
            INFO(folder);
            const cv::Mat m =
                cv::imread((dir / folder / stem).string() + ".png", cv::IMREAD_UNCHANGED);
            REQUIRE(m.type() == host.type());
            CHECK(cv::norm(m, host, cv::NORM_INF) == 0);
        }
    }
    // A JPEG's pixels do not come down either where nvJPEG encodes them
    // (kernels/codecs/jpeg_encoder.hpp), and do where it is missing.
    const auto r = run_cudaconv(
        {"in/chelsea.png", "-f", "edge", "-k", "naive", "--json", "-", "-q", "-o", "chelsea.jpg"},
        dir.path());
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out.substr(0, r.out.find('\n')));
    const bool nvjpeg = gpu_jpeg_encoder_problem().empty();
    CHECK(j["encoder"] == (nvjpeg ? "gpu" : "cpu"));
    CHECK(j["timings_ms"]["png_rows"].get<double>() == 0.0);
    CHECK((j["timings_ms"]["gpu_jpeg"].get<double>() > 0.0) == nvjpeg);
    CHECK((j["timings_ms"]["download"].get<double>() > 0.0) == !nvjpeg);
}

}  // namespace cudaconv::test
