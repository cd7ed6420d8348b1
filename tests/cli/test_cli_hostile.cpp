// Text a user (or an attacker) controls, as the binary meets it: filter
// files and lists of any length read in little memory, taps that would
// overflow float32 refused, and specs and paths echoed without terminal
// codes, on one line.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include "support/control_bytes.hpp"
#include "support/files.hpp"
#include "support/run_command.hpp"
#include "support/sanitizers.hpp"

namespace cudaconv::test {
namespace fs = std::filesystem;

namespace {

// What cudaconv may take beyond its own start (its libraries, 60-odd MB;
// a sanitizer's shadow memory too in the asan build): far below what
// holding a 50 MB file's lines or a stream's bytes takes.
constexpr long kSmallGrowthKb = 40 * 1024;

// The peak of a cudaconv that only starts and ends.
long start_peak_kb(const fs::path& dir) {
    const auto r = run_cudaconv({"--version"}, dir);
    REQUIRE(r.exit_code == 0);
    return r.peak_rss_kb;
}

int lines_in(const std::string& text) {
    return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

std::string exact(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", value);
    return text;
}

// No inf, no NaN (cv::checkRange refuses FLT_MAX itself).
bool all_finite(const cv::Mat& image) {
    return std::all_of(image.begin<float>(), image.end<float>(),
                       [](float v) { return std::isfinite(v); });
}

// A 64x64 gray u16 image of 65535 everywhere: the largest integer sample.
void write_white_u16(const fs::path& path) {
    REQUIRE(cv::imwrite(path.string(), cv::Mat(64, 64, CV_16UC1, cv::Scalar(65535))));
}

}  // namespace

TEST_CASE("a 50 MB filter file of blank lines is read in little memory", "[cli][limits]") {
    TempDir dir;
    write_file(dir / "blank.txt", std::string(50'000'000, '\n'));
    write_file(dir / "blank.mat", std::string(50'000'000, '\n'));
    write_file(dir / "one-line.txt", std::string(60'000'000, '1') + "\n");
    const std::vector<std::pair<std::string, std::string>> cases{
        {"blank.txt", "cudaconv: error: blank.txt: no numbers in the file (empty filter)\n"},
        {"blank.mat",
         "cudaconv: error: blank.mat: no header line \"W H [scale [offset]]\" (empty filter)\n"},
        {"one-line.txt",
         "cudaconv: error: one-line.txt:1: line longer than 64 KiB (not a filter file?)\n"},
    };
    const long start_kb = start_peak_kb(dir.path());
    for (const auto& [file, message] : cases) {
        const auto r = run_cudaconv({sample("camera.png"), "-f", file, "-k", "cpu", "-o", "o.png"},
                                    dir.path());
        INFO(file << ": " << r.err << "peak " << r.peak_rss_kb << " KB, at start " << start_kb);
        CHECK(r.exit_code == 2);
        CHECK(r.err == message);
        CHECK(r.peak_rss_kb < start_kb + kSmallGrowthKb);
        CHECK_FALSE(fs::exists(dir / "o.png"));
    }
}

TEST_CASE("a --from stream of random bytes stops at its first bad line", "[cli][limits]") {
    TempDir dir;
    // 100 MB of random bytes through a pipe: holding them would take more
    // than that; a NUL byte comes within the first few hundred.
    const std::string script =
        "head -c 100000000 /dev/urandom | \"$0\" --from - -f edge -k cpu -o o.png";
    const long start_kb = start_peak_kb(dir.path());
    const auto r = run_program({"sh", "-c", script, cudaconv_binary()}, dir.path());
    INFO(r.err << "peak " << r.peak_rss_kb << " KB, at start " << start_kb);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::StartsWith("cudaconv: error: --from -:") &&
                          Catch::EndsWith(": not a list of paths (a NUL byte)\n"));
    CHECK(lines_in(r.err) == 1);
    CHECK(r.peak_rss_kb < start_kb + kSmallGrowthKb);
    CHECK(dir.entries().empty());
}

TEST_CASE("a --from line that is not a path is named by list and line", "[cli][limits]") {
    TempDir dir;
    const std::string cam = sample("camera.png");
    write_file(dir / "nul.txt", cam + "\n" + std::string("x\0y.png\n", 8));
    write_file(dir / "long.txt", cam + "\n\n" + std::string(4097, 'p') + "\n");
    struct Case {
        std::string list;
        std::string message;
    };
    const std::vector<Case> cases{
        {"nul.txt", "cudaconv: error: --from nul.txt:2: not a list of paths (a NUL byte)\n"},
        {"long.txt",
         "cudaconv: error: --from long.txt:3: not a list of paths (a line longer than 4096 "
         "bytes)\n"},
    };
    for (const Case& c : cases) {
        const auto r =
            run_cudaconv({"--from", c.list, "-f", "edge", "-k", "cpu", "-o", "out/"}, dir.path());
        CHECK(r.exit_code == 2);
        CHECK(r.err == c.message);
        CHECK_FALSE(fs::exists(dir / "out"));
    }
    // 4096 bytes is still a path (one that names no file here).
    write_file(dir / "longest.txt", std::string(4096, 'p') + "\n");
    const auto r = run_cudaconv({"--from", "longest.txt", "-f", "edge", "-k", "cpu", "-o", "out/"},
                                dir.path());
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.err, !Catch::Contains("not a list of paths"));
}

TEST_CASE("filters whose taps overflow float32 are refused before any work", "[cli][limits]") {
    TempDir dir;
    const std::string cam = sample("camera.png");
    write_file(dir / "tiny-scale.mat", "1 1 1e-320\n1\n");
    write_file(dir / "huge.mat", "1 1 1e-300\n1e300\n");
    write_file(dir / "offset.mat", "1 1 1 3.5e38\n0\n");
    struct Case {
        std::vector<std::string> args;
        std::string message;
    };
    const std::vector<Case> cases{
        {{"-f", "tiny-scale.mat"},
         "tiny-scale.mat:2: tap 1 divided by the scale is not a finite number"},
        {{"-f", "@huge.mat"}, "huge.mat:2: tap 1 divided by the scale is not a finite number"},
        {{"-f", "1x1:1e308"},
         "filter \"1x1:1e308\": the filter's taps overflow float32 (worst-case sum inf)"},
        {{"-f", "2x1:1e308,-1e308", "--depth", "f32"},
         "filter \"2x1:1e308,-1e308\": the filter's taps overflow float32 (worst-case sum inf)"},
        {{"-f", "1x1:1e35"},
         "filter \"1x1:1e35\": the filter's taps overflow float32 (worst-case sum 6.6e+39)"},
        {{"-f", "offset.mat", "--depth", "f32"}, "offset.mat: the output overflows float32"},
        {{"-f", "identity", "--scale", "1e34"},
         "filter \"identity\": the output overflows float32"},
        {{"-f", "identity", "--delta", "-1e39"},
         "filter \"identity\": the output overflows float32"},
    };
    for (const Case& c : cases) {
        std::vector<std::string> args{cam, "-k", "cpu", "-o", "o.tif"};
        args.insert(args.end(), c.args.begin(), c.args.end());
        const auto r = run_cudaconv(args, dir.path());
        INFO(c.args[1] << ": " << r.err);
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::StartsWith("cudaconv: error: " + c.message));
        CHECK(lines_in(r.err) == 1);
        CHECK_FALSE(fs::exists(dir / "o.tif"));
    }

    // bench's -f too.
    const auto bench = run_cudaconv(
        {"bench", "-f", "1x1:1e308", "--size", "16x16", "--depth", "f32", "-k", "cpu-ref"},
        dir.path());
    CHECK(bench.exit_code == 2);
    CHECK_THAT(bench.err,
               Catch::Contains("filter \"1x1:1e308\": the filter's taps overflow float32"));
}

TEST_CASE("the largest taps that fit float32 give finite pixels, the next are refused",
          "[cli][limits]") {
    TempDir dir;
    write_white_u16(dir / "white.png");
    // The largest float32 tap with tap x 65535 within float32, and the next.
    float tap = FLT_MAX / 65535.0f;
    while (static_cast<double>(tap) * 65535.0 > FLT_MAX) tap = std::nextafterf(tap, 0.0f);
    while (static_cast<double>(std::nextafterf(tap, FLT_MAX)) * 65535.0 <= FLT_MAX) {
        tap = std::nextafterf(tap, FLT_MAX);
    }
    const float over = std::nextafterf(tap, FLT_MAX);
    write_file(dir / "largest.mat", "1 1 1 " + exact(FLT_MAX) + "\n0\n");
    write_file(dir / "over.mat",
               "1 1 1 " + exact(std::nextafter(static_cast<double>(FLT_MAX), HUGE_VAL)) + "\n0\n");
    struct Case {
        std::vector<std::string> accepted;
        std::vector<std::string> refused;
    };
    const std::vector<Case> cases{
        {{"-f", "1x1:" + exact(tap)}, {"-f", "1x1:" + exact(over)}},
        {{"-f", "2x1:" + exact(tap / 2) + "," + exact(-tap / 2)},
         {"-f", "2x1:" + exact(over / 2) + "," + exact(-over / 2)}},
        {{"-f", "largest.mat"}, {"-f", "over.mat"}},
        {{"-f", "identity", "--scale", exact(tap)}, {"-f", "identity", "--scale", exact(over)}},
    };
    // white.png filtered with `filter` into `out`, as f32.
    auto run = [&dir](const std::vector<std::string>& filter, const std::string& out) {
        std::vector<std::string> args{"white.png", "--depth", "f32", "-k", "cpu", "-o", out};
        args.insert(args.end(), filter.begin(), filter.end());
        return run_cudaconv(args, dir.path());
    };
    for (const Case& c : cases) {
        auto r = run(c.accepted, "accepted.pfm");
        INFO(c.accepted[1] << ": " << r.err);
        REQUIRE(r.exit_code == 0);
        const cv::Mat image = cv::imread((dir / "accepted.pfm").string(), cv::IMREAD_UNCHANGED);
        REQUIRE(image.type() == CV_32FC1);
        CHECK(all_finite(image));
        fs::remove(dir / "accepted.pfm");

        r = run(c.refused, "refused.tif");
        INFO(c.refused[1] << ": " << r.err);
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Contains("overflow"));
        CHECK_FALSE(fs::exists(dir / "refused.tif"));
    }
}

TEST_CASE("specs and paths are echoed escaped, on one line", "[cli][limits]") {
    TempDir dir;
    const std::string cam = sample("camera.png");
    const std::vector<std::vector<std::string>> cases{
        {cam, "-f", "edgy\x1b[2J\x1b[31m\r\ncudaconv: info: all done\x07", "-o", "o.png"},
        {cam, "-f", "3x3:1,\x1b]0;pwned\x07,3", "-o", "o.png"},
        {cam, "-f", "@\x1b[31mk\n.txt", "-o", "o.png"},
        {cam, "-f",
         "gaussian:5:\xc2\x9b"
         "2J",
         "-o", "o.png"},
        {cam, "-f", "edge", "--border", "\x1b[5mblink", "-o", "o.png"},
        // Not echoed by filters/: the log's own escaping.
        {"missing\x1b[31m\r.png", "-f", "edge", "-o", "o.png"},
    };
    for (const auto& args : cases) {
        const auto r = run_cudaconv(args, dir.path());
        INFO(r.err);
        CHECK(r.exit_code != 0);
        CHECK(lines_in(r.err) == 1);
        CHECK_THAT(r.err, Catch::StartsWith("cudaconv: error: "));
        CHECK_FALSE(has_control_bytes(r.err, LineEnds::allowed));
        CHECK_THAT(r.err, Catch::Contains("\\x1b") || Catch::Contains("\\xc2\\x9b"));
        CHECK(dir.entries().empty());
    }
}

TEST_CASE("timings: paths are printed escaped on stdout too", "[cli][limits]") {
    TempDir dir;
    const std::string name = "in\x1b[2J\r.png";
    fs::copy_file(sample("camera.png"), dir / name);
    const auto r = run_cudaconv({name, "-f", "edge", "-o", "o.png", "--timings"}, dir.path());
    INFO(r.out);
    CHECK(r.exit_code == 0);
    CHECK_FALSE(has_control_bytes(r.out, LineEnds::allowed));
    CHECK_THAT(r.out, Catch::StartsWith("in\\x1b[2J\\x0d.png -> o.png: 512x512"));
}

TEST_CASE("a 300-character unknown spec is echoed shortened", "[cli][limits]") {
    TempDir dir;
    const std::string spec(300, 'q');
    const auto r = run_cudaconv({sample("camera.png"), "-f", spec, "-o", "o.png"}, dir.path());
    CHECK(r.exit_code == 2);
    CHECK(r.err == "cudaconv: error: unknown filter \"" + std::string(80, 'q') +
                       "...\"; run 'cudaconv list filters'\n");
}

TEST_CASE("out of memory and filesystem failures are one line naming what failed",
          "[cli][limits]") {
    TempDir dir;
#if !defined(CUDACONV_TEST_UNDER_SANITIZER)  // no sanitizer starts under ulimit -v
    // A 10.8 GB image under a 4 GB address space: OpenCV's allocation
    // fails, and the message says so without OpenCV's source file and line.
    const auto r = run_program({"sh", "-c",
                                "ulimit -v 4000000; exec \"$0\" bench --size 30000x30000 -k cpu "
                                "--depth f32 -f edge -q",
                                cudaconv_binary()},
                               dir.path());
    INFO(r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.err == "cudaconv: error: out of memory while benchmarking (OpenCV: Failed to allocate "
                   "10800000000 bytes)\n");
#endif

    // compare --diff where a folder cannot be made: the path and the
    // problem, not "filesystem error: ...", before anything is compared.
    for (const char* side : {"a", "b"}) {
        fs::create_directory(dir / side);
        const int value = side[0] == 'a' ? 10 : 20;
        const cv::Mat image(8, 8, CV_8UC1, cv::Scalar(value));
        REQUIRE(cv::imwrite((dir / side / "x.png").string(), image));
    }
    write_file(dir / "file.txt", "not a folder");
    const auto c = run_cudaconv({"compare", "a", "b", "--diff", "file.txt/heat"}, dir.path());
    INFO(c.out);
    CHECK(c.exit_code == 2);
    CHECK(c.out.empty());
    CHECK(c.err ==
          "cudaconv: error: --diff file.txt/heat/x.png: file.txt is a file, not a folder\n");
}

}  // namespace cudaconv::test
