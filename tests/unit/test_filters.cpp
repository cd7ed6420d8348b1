// filters/: every way of writing -f (docs/SPEC.md, "Filter specs"), checked
// against the taps docs/SPEC.md and OpenCV fix, and every way of getting it wrong
// checked for an error that names the spec or file, the line and the problem.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <opencv2/imgproc.hpp>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "filters/file_formats.hpp"
#include "filters/gaussian.hpp"
#include "filters/spec.hpp"
#include "support/control_bytes.hpp"
#include "support/source_dir.hpp"

namespace {

namespace fs = std::filesystem;
using cudaconv::Filter;
using cudaconv::FilterError;
using cudaconv::parse_filter_spec;
using cudaconv::test::has_control_bytes;

// A fresh folder for filter files, removed at the end of the test.
// (tests/support/run_command.hpp has one, but only the CLI tests link it.)
class ScratchDir {
public:
    ScratchDir() {
        std::random_device seed;
        path_ = fs::temp_directory_path() / ("cudaconv-filters-" + std::to_string(seed()));
        fs::create_directories(path_);
    }
    ~ScratchDir() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;

    std::string write(const std::string& name, const std::string& content) const {
        const fs::path p = path_ / name;
        std::ofstream(p, std::ios::binary) << content;
        return p.string();
    }
    std::string path(const std::string& name) const { return (path_ / name).string(); }
    const fs::path& root() const { return path_; }

private:
    fs::path path_;
};

// Runs the test body in `dir`, so bare names resolve there.
class CurrentDir {
public:
    explicit CurrentDir(const fs::path& dir) : saved_(fs::current_path()) { fs::current_path(dir); }
    ~CurrentDir() { fs::current_path(saved_); }
    CurrentDir(const CurrentDir&) = delete;
    CurrentDir& operator=(const CurrentDir&) = delete;

private:
    fs::path saved_;
};

// Bad specs are usage errors: exit 2.
static_assert(std::is_base_of_v<cudaconv::UsageError, FilterError>);

// The FilterError message `spec` produces; fails the test if none.
std::string error_of(const std::string& spec) {
    try {
        const Filter f = parse_filter_spec(spec);
        FAIL("no error for \"" << spec << "\": got a " << f.width << "x" << f.height << " filter");
    } catch (const FilterError& e) {
        return e.what();
    }
    return {};
}

std::vector<double> column(const cv::Mat& k) {
    std::vector<double> out;
    for (int i = 0; i < k.rows; ++i) out.push_back(k.at<double>(i));
    return out;
}

std::vector<double> outer(const std::vector<double>& col, const std::vector<double>& row) {
    std::vector<double> out;
    for (double c : col) {
        for (double r : row) out.push_back(c * r);
    }
    return out;
}

std::vector<double> opencv_gaussian(int n, double sigma) {
    const std::vector<double> k = column(cv::getGaussianKernel(n, sigma, CV_64F));
    return outer(k, k);
}

// The largest relative difference between two tap lists, each tap against
// its own size; exact zeros on both sides count as equal.
double worst_relative_error(const std::vector<double>& actual,
                            const std::vector<double>& expected) {
    REQUIRE(actual.size() == expected.size());
    double worst = 0.0;
    for (std::size_t i = 0; i < actual.size(); ++i) {
        const double diff = std::fabs(actual[i] - expected[i]);
        if (diff == 0.0) continue;
        // Below the smallest normal double both are "zero" for any image.
        if (std::fabs(expected[i]) < 1e-300 && std::fabs(actual[i]) < 1e-300) continue;
        worst = std::max(worst, diff / std::fabs(expected[i]));
    }
    return worst;
}

// cv::getGaussianKernel evaluates exp() in OpenCV's software floating point,
// which is off from the correctly rounded value by up to ~1e-14 relative for
// far tails (|argument| in the hundreds) and a few ulps near the centre;
// gaussian.cpp uses std::exp (within 1 ulp). Otherwise the arithmetic is
// OpenCV's, operation for operation. 1e-13 is far below what a float32
// accumulation, let alone an 8-bit output, can see.
constexpr double kGaussianRelTolerance = 1e-13;

}  // namespace

TEST_CASE("named filters have the taps docs/SPEC.md gives", "[filters]") {
    struct Case {
        const char* spec;
        int width;
        int height;
        std::vector<double> taps;
    };
    const std::vector<Case> cases = {
        {"identity", 1, 1, {1}},
        {"edge", 3, 3, {-1, -1, -1, -1, 8, -1, -1, -1, -1}},
        {"laplacian", 3, 3, {0, 1, 0, 1, -4, 1, 0, 1, 0}},
        {"laplacian8", 3, 3, {1, 1, 1, 1, -8, 1, 1, 1, 1}},
        {"sobel-x", 3, 3, {-1, 0, 1, -2, 0, 2, -1, 0, 1}},
        {"sobel-y", 3, 3, {-1, -2, -1, 0, 0, 0, 1, 2, 1}},
        {"scharr-x", 3, 3, {-3, 0, 3, -10, 0, 10, -3, 0, 3}},
        {"scharr-y", 3, 3, {-3, -10, -3, 0, 0, 0, 3, 10, 3}},
        {"prewitt-x", 3, 3, {-1, 0, 1, -1, 0, 1, -1, 0, 1}},
        {"prewitt-y", 3, 3, {-1, -1, -1, 0, 0, 0, 1, 1, 1}},
        {"sharpen", 3, 3, {0, -1, 0, -1, 5, -1, 0, -1, 0}},
        {"emboss", 3, 3, {-2, -1, 0, -1, 1, 1, 0, 1, 2}},
        {"box:1", 1, 1, {1}},
        {"box:2", 2, 2, {0.25, 0.25, 0.25, 0.25}},
        {"box:3x2", 3, 2, std::vector<double>(6, 1.0 / 6)},
        {"box:1x3", 1, 3, std::vector<double>(3, 1.0 / 3)},
        {"motion:4", 4, 1, {0.25, 0.25, 0.25, 0.25}},
        {"gaussian:3",
         3,
         3,
         {1 / 16.0, 2 / 16.0, 1 / 16.0, 2 / 16.0, 4 / 16.0, 2 / 16.0, 1 / 16.0, 2 / 16.0,
          1 / 16.0}},
        {"unsharp:3",
         3,
         3,
         {-1 / 16.0, -2 / 16.0, -1 / 16.0, -2 / 16.0, 2 - 4 / 16.0, -2 / 16.0, -1 / 16.0, -2 / 16.0,
          -1 / 16.0}},
        {"unsharp:3:0.5",
         3,
         3,
         {-0.5 / 16, -1 / 16.0, -0.5 / 16, -1 / 16.0, 1.5 - 2 / 16.0, -1 / 16.0, -0.5 / 16,
          -1 / 16.0, -0.5 / 16}},
    };
    for (const Case& c : cases) {
        INFO(c.spec);
        const Filter f = parse_filter_spec(c.spec);
        CHECK(f.width == c.width);
        CHECK(f.height == c.height);
        CHECK(f.taps == c.taps);
        CHECK(f.label == c.spec);
        CHECK(f.delta == 0.0);
    }
}

TEST_CASE("box:N is N x N with taps 1/N^2", "[filters]") {
    const int n = GENERATE(1, 2, 3, 5, 8, 31, 1024);
    const Filter f = parse_filter_spec("box:" + std::to_string(n));
    REQUIRE(f.width == n);
    REQUIRE(f.height == n);
    REQUIRE(f.taps.size() == static_cast<std::size_t>(n) * n);
    const double tap = 1.0 / (static_cast<double>(n) * n);
    CHECK(std::all_of(f.taps.begin(), f.taps.end(), [&](double t) { return t == tap; }));
}

TEST_CASE("derivative filters are the kernels cv::Sobel and cv::Scharr correlate with",
          "[filters]") {
    struct Case {
        const char* spec;
        int dx;
        int dy;
        int ksize;
    };
    const Case c = GENERATE(Case{"sobel-x", 1, 0, 3}, Case{"sobel-y", 0, 1, 3},
                            Case{"scharr-x", 1, 0, cv::FILTER_SCHARR},
                            Case{"scharr-y", 0, 1, cv::FILTER_SCHARR});
    INFO(c.spec);
    cv::Mat kx;
    cv::Mat ky;
    cv::getDerivKernels(kx, ky, c.dx, c.dy, c.ksize, false, CV_64F);
    CHECK(parse_filter_spec(c.spec).taps == outer(column(ky), column(kx)));
}

TEST_CASE("named filters ignore case, and the label keeps the user's spelling", "[filters]") {
    const Filter f = parse_filter_spec("Sobel-X");
    CHECK(f.taps == parse_filter_spec("sobel-x").taps);
    CHECK(f.label == "Sobel-X");
    CHECK(parse_filter_spec("GAUSSIAN:SIGMA=1.5").taps ==
          parse_filter_spec("gaussian:sigma=1.5").taps);
    CHECK(parse_filter_spec("BOX:3X2").width == 3);
}

TEST_CASE("every listed named filter parses, and docs/SPEC.md's names are all listed",
          "[filters]") {
    const auto& all = cudaconv::named_filters();
    std::vector<std::string> syntaxes;
    for (const auto& info : all) {
        INFO(info.syntax);
        CHECK_FALSE(info.description.empty());
        CHECK_FALSE(info.detail.empty());  // list filters -v's line
        const Filter f = parse_filter_spec(info.example);
        CHECK(f.width >= 1);
        CHECK(f.taps.size() == static_cast<std::size_t>(f.width) * f.height);
        syntaxes.push_back(info.syntax);
    }
    for (const char* required : {"identity", "edge", "laplacian", "sobel-x", "sobel-y", "scharr-x",
                                 "scharr-y", "prewitt-x", "prewitt-y", "sharpen", "emboss", "box:N",
                                 "gaussian:N", "gaussian:N:SIGMA", "gaussian:sigma=S"}) {
        INFO(required);
        CHECK(std::find(syntaxes.begin(), syntaxes.end(), required) != syntaxes.end());
    }
}

TEST_CASE("gaussian:N equals cv::getGaussianKernel(N, 0) as an outer product", "[filters]") {
    const int n = GENERATE(range(1, 33, 2));
    INFO("gaussian:" << n);
    const Filter f = parse_filter_spec("gaussian:" + std::to_string(n));
    REQUIRE(f.width == n);
    REQUIRE(f.height == n);
    if (n <= 9) {
        // OpenCV's fixed tables: exact.
        CHECK(f.taps == opencv_gaussian(n, 0.0));
    } else {
        CHECK(worst_relative_error(f.taps, opencv_gaussian(n, 0.0)) <= kGaussianRelTolerance);
    }
    // The sigma OpenCV picks for the size is the one docs/SPEC.md gives.
    const double spec_sigma = 0.3 * ((n - 1) / 2.0 - 1) + 0.8;
    CHECK(cudaconv::gaussian_sigma_for_size(n) == Approx(spec_sigma).epsilon(1e-15));
}

TEST_CASE("gaussian:N:SIGMA equals cv::getGaussianKernel(N, SIGMA)", "[filters]") {
    const int n = GENERATE(range(1, 33, 2));
    const double sigma = GENERATE(0.3, 0.8, 1.0, 1.5, 2.0, 3.7, 10.0);
    INFO("gaussian:" << n << ":" << sigma);
    std::ostringstream spec;
    spec << "gaussian:" << n << ":" << sigma;
    const Filter f = parse_filter_spec(spec.str());
    REQUIRE(f.width == n);
    CHECK(worst_relative_error(f.taps, opencv_gaussian(n, sigma)) <= kGaussianRelTolerance);
    // The 1D taps alone, which a separable variant would use.
    CHECK(worst_relative_error(cudaconv::gaussian_kernel_1d(n, sigma),
                               column(cv::getGaussianKernel(n, sigma, CV_64F))) <=
          kGaussianRelTolerance);
}

TEST_CASE("gaussian:sigma=S has size cvRound(6S+1)|1 and OpenCV's taps", "[filters]") {
    const int quarter_steps = GENERATE(range(2, 41));  // sigma 0.5 .. 10 by 0.25
    const double sigma = quarter_steps * 0.25;
    INFO("gaussian:sigma=" << sigma);
    const int n = cvRound(sigma * 6 + 1) | 1;
    std::ostringstream spec;
    spec << "gaussian:sigma=" << sigma;
    const Filter f = parse_filter_spec(spec.str());
    REQUIRE(f.width == n);
    REQUIRE(f.height == n);
    CHECK(worst_relative_error(f.taps, opencv_gaussian(n, sigma)) <= kGaussianRelTolerance);
}

TEST_CASE("gaussian size from sigma rounds half to even like cvRound", "[filters]") {
    for (double sigma : {0.01, 0.25, 0.5, 0.75, 1.25, 1.75, 2.25, 4.0 / 3, 7.5, 100.0}) {
        INFO(sigma);
        CHECK(cudaconv::gaussian_size_for_sigma(sigma) == (cvRound(sigma * 6 + 1) | 1));
    }
}

TEST_CASE("inline WxH:v,v,... is row-major and takes any number format", "[filters]") {
    const Filter f = parse_filter_spec("3x3:1,2,1,2,4,2,1,2,1");
    CHECK(f.width == 3);
    CHECK(f.taps == std::vector<double>{1, 2, 1, 2, 4, 2, 1, 2, 1});
    CHECK(f.label == "3x3:1,2,1,2,4,2,1,2,1");

    const Filter wide = parse_filter_spec("3x2:1,2,3,4,5,6");
    CHECK(wide.width == 3);
    CHECK(wide.height == 2);
    CHECK(wide.at(2, 0) == 3);
    CHECK(wide.at(0, 1) == 4);

    const Filter numbers = parse_filter_spec("4x2: -1, +2.5 ,1e-3,-4E2, .5,5.,0,-0.25");
    CHECK(numbers.taps == std::vector<double>{-1, 2.5, 1e-3, -400, 0.5, 5, 0, -0.25});
    CHECK(parse_filter_spec("1X1:7").taps == std::vector<double>{7});
}

// A decimal too small for a double is the nearest one, as it is where it is
// merely small (1e-310, a subnormal): 0 or a subnormal, not an error. Too
// large stays an error ("bad specs ..." below).
TEST_CASE("a tap that underflows is 0 or a subnormal in specs and files", "[filters]") {
    const Filter f = parse_filter_spec("4x1:1e-400,1,-1e-400,2.5e-320");
    REQUIRE(f.taps.size() == 4);
    CHECK(f.taps[0] == 0.0);
    CHECK(f.taps[1] == 1.0);
    CHECK(f.taps[2] == 0.0);
    CHECK(std::signbit(f.taps[2]));
    CHECK(f.taps[3] == 2.5e-320);
    CHECK(parse_filter_spec("1x1:0.000001e-99999999999999999999").taps == std::vector<double>{0.0});
    const ScratchDir dir;
    CHECK(parse_filter_spec(dir.write("tiny.txt", "1 1e-400 1\n")).taps ==
          std::vector<double>{1, 0, 1});
    // In a .mat header it is a scale of 0, which the taps cannot be divided by.
    CHECK_THROWS_WITH(parse_filter_spec(dir.write("tiny.mat", "1 1 1e-400\n1\n")),
                      Catch::Contains("scale must not be 0"));
}

TEST_CASE("plain filter files: comments, separators, blank lines, line ends", "[filters]") {
    const ScratchDir dir;
    const std::vector<double> expected = {1, -2, 3.5, 4, 5, -6e-1};
    const std::string text =
        GENERATE(std::string("1 -2 3.5\n4 5 -6e-1\n"),
                 std::string("# a comment\n\n1\t-2\t3.5   # mid-line comment\n   \n4,5,-6e-1"),
                 std::string("1, -2, 3.5\r\n4, 5, -6e-1\r\n"), std::string("1 -2 3.5\r4 5 -6e-1\r"),
                 std::string("\xEF\xBB\xBF\"1\",\"-2\",\"3.5\"\n\"4\",\"5\",\"-6e-1\"\n"),
                 std::string("1 , -2 ,3.5,\n4 5 -6e-1 #\n\n\n"));
    INFO(text);
    const std::string path = dir.write("my blur.txt", text);
    for (const std::string& spec : {path, "@" + path}) {
        const Filter f = parse_filter_spec(spec);
        CHECK(f.width == 3);
        CHECK(f.height == 2);
        CHECK(f.taps == expected);
        CHECK(f.label == "my blur");
        CHECK(f.delta == 0.0);
    }
}

TEST_CASE("libvips .mat files: taps are value/scale, the offset becomes delta", "[filters]") {
    const ScratchDir dir;
    const std::string path = dir.write("relief.MAT", "3 2 4 128\n1 2 3\n-4 -8 12\n");
    const Filter f = parse_filter_spec(path);
    CHECK(f.width == 3);
    CHECK(f.height == 2);
    CHECK(f.taps == std::vector<double>{0.25, 0.5, 0.75, -1, -2, 3});
    CHECK(f.delta == 128);
    CHECK(f.label == "relief");

    // Scale and offset default to 1 and 0; comments, commas and quotes as libvips reads them.
    const Filter g = parse_filter_spec(
        dir.write("k.mat", "# made by hand\n2 2\n\"1\",\"2\"\r\n3, 4 # last\r\n\n"));
    CHECK(g.taps == std::vector<double>{1, 2, 3, 4});
    CHECK(g.delta == 0.0);

    // A negative scale is legal (it inverts); only 0 is not.
    CHECK(parse_filter_spec(dir.write("neg.mat", "1 1 -2\n3\n")).taps == std::vector<double>{-1.5});
}

TEST_CASE("a regular file beats a filter name but a folder does not", "[filters]") {
    const ScratchDir dir;
    const CurrentDir here(dir.root());
    dir.write("edge", "7\n");
    fs::create_directory(dir.root() / "sharpen");
    CHECK(parse_filter_spec("edge").taps == std::vector<double>{7});
    CHECK(parse_filter_spec("edge").label == "edge");
    CHECK(parse_filter_spec("sharpen").taps == std::vector<double>{0, -1, 0, -1, 5, -1, 0, -1, 0});
    // Not a name, so the folder is read as a file, and refused.
    fs::create_directory(dir.root() / "kernels");
    CHECK_THAT(error_of("kernels"), Catch::Contains("kernels: is a directory, not a filter file"));
}

TEST_CASE("the sample filter files parse to what their README says", "[filters]") {
    const fs::path samples = cudaconv::test::source_dir() / "filters" / "samples";
    const Filter gauss = parse_filter_spec((samples / "gaussian5x5.mat").string());
    CHECK(gauss.taps == parse_filter_spec("gaussian:5").taps);
    CHECK(gauss.label == "gaussian5x5");

    const Filter relief = parse_filter_spec((samples / "relief.mat").string());
    CHECK(relief.sum() == 0.0);
    CHECK(relief.delta == 128);

    const Filter streak = parse_filter_spec((samples / "streak.txt").string());
    CHECK(streak.width == 5);
    CHECK(streak.height == 3);
    CHECK(streak.sum() == Approx(1.0));
    CHECK(streak.taps != streak.rotated_180().taps);

    cv::Mat kx;
    cv::Mat ky;
    cv::getDerivKernels(kx, ky, 1, 0, 5, false, CV_64F);
    CHECK(parse_filter_spec((samples / "sobel5x5.csv").string()).taps ==
          outer(column(ky), column(kx)));

    const Filter hat = parse_filter_spec((samples / "log7x7.txt").string());
    CHECK(hat.width == 7);
    CHECK(hat.height == 7);
    CHECK(hat.sum() == 0.0);
    CHECK(hat.taps == hat.rotated_180().taps);
    CHECK(hat.at(3, 3) == 24.0);

    // Every sample is parsed, including ones added later.
    int parsed = 0;
    for (const auto& entry : fs::directory_iterator(samples)) {
        // .npy samples are a layer's weights (--weights): test_conv_layer.cpp.
        if (entry.path().extension() == ".md" || entry.path().extension() == ".npy") continue;
        INFO(entry.path());
        CHECK_NOTHROW(parse_filter_spec(entry.path().string()));
        ++parsed;
    }
    CHECK(parsed >= 5);
}

TEST_CASE("bad specs name the spec and the problem", "[filters]") {
    struct Case {
        std::string spec;
        std::vector<std::string> expected;  // substrings of the message
    };
    const std::vector<Case> cases = {
        {"", {"empty filter spec"}},
        {"edgy", {"unknown filter \"edgy\"; run 'cudaconv list filters'", "did you mean \"edge\""}},
        {"sobel_x", {"unknown filter \"sobel_x\"", "did you mean \"sobel-x\""}},
        {"gauss:5", {"unknown filter \"gauss\" in \"gauss:5\"", "did you mean \"gaussian:N\""}},
        {"frobnicate", {"unknown filter \"frobnicate\"; run 'cudaconv list filters'"}},
        {"blur.txt", {"blur.txt: no such filter file"}},
        {"5x5.mat", {"5x5.mat: no such filter file"}},
        {"@", {"a file name must follow '@'"}},
        {"@/nonexistent/k.txt", {"/nonexistent/k.txt: no such filter file"}},
        {"edge:3", {"filter \"edge:3\": edge takes no arguments"}},
        {"box", {"filter \"box\": box needs a size: box:N or box:WxH"}},
        {"box:", {"filter \"box:\": box needs a size"}},
        {"box:0", {"filter \"box:0\": size must be at least 1, got 0"}},
        {"box:-3", {"filter \"box:-3\": size must be at least 1, got -3"}},
        {"box:abc", {"filter \"box:abc\": size \"abc\" is not an integer"}},
        {"box:2.5", {"size \"2.5\" is not an integer"}},
        {"box:3x0", {"filter \"box:3x0\": height must be at least 1, got 0"}},
        {"box:3x", {"height is missing"}},
        {"box:3x3x3", {"height \"3x3\" is not an integer"}},
        {"box:3:3", {"box needs a size"}},
        {"box:5000", {"size 5000 is too large (at most 1025)"}},
        {"box:1025",
         {"filter \"box:1025\": a 1025x1025 filter is too large",
          "(1050625 taps; at most 1048576)"}},
        {"box:99999999999999999999", {"\"99999999999999999999\" is out of range"}},
        {"motion:0", {"filter \"motion:0\": length must be at least 1, got 0"}},
        {"gaussian",
         {"filter \"gaussian\": gaussian needs gaussian:N, gaussian:N:SIGMA or gaussian:sigma=S"}},
        {"gaussian:", {"gaussian needs"}},
        {"gaussian:4", {"filter \"gaussian:4\": size must be odd, got 4 (try 3 or 5)"}},
        {"gaussian:0", {"size must be at least 1, got 0"}},
        {"gaussian:-5", {"size must be at least 1, got -5"}},
        {"gaussian:5:0", {"filter \"gaussian:5:0\": sigma must be > 0, got 0"}},
        {"gaussian:5:-1", {"sigma must be > 0, got -1"}},
        {"gaussian:5:", {"sigma is missing"}},
        {"gaussian:5:1:2", {"gaussian needs"}},
        {"gaussian:sigma=-1", {"filter \"gaussian:sigma=-1\": sigma must be > 0, got -1"}},
        {"gaussian:sigma=0", {"sigma must be > 0, got 0"}},
        {"gaussian:sigma=abc", {"filter \"gaussian:sigma=abc\": sigma \"abc\" is not a number"}},
        {"gaussian:sigma=", {"sigma is missing"}},
        {"gaussian:sigma=nan",
         {"sigma \"nan\" is not a finite number (NaN and Inf are not allowed)"}},
        {"gaussian:sigma=inf", {"NaN and Inf are not allowed"}},
        {"gaussian:sigma=1e999", {"\"1e999\" is out of range"}},
        {"gaussian:sigma=200", {"sigma 200 needs a filter wider than 1025 taps"}},
        {"gaussian:sigma=1e300", {"wider than 1025 taps"}},
        {"gaussian:sigma=1:3", {"gaussian needs"}},
        {"gaussian:1027", {"size 1027 is too large"}},
        {"unsharp:4", {"filter \"unsharp:4\": size must be odd, got 4"}},
        {"unsharp:3:-1", {"amount must be > 0, got -1"}},
        {"3x3", {"filter \"3x3\": an inline filter needs its values: WxH:v,v,..."}},
        {"3x3:", {"filter \"3x3:\": no values after ':' (expected 9)"}},
        {"3x3:1,2,3,4,5,6,7,8,9,",
         {"filter \"3x3:1,2,3,4,5,6,7,8,9,\": value 10 is empty (a stray or trailing comma?)"}},
        {"3x3:1,,3,4,5,6,7,8,9", {"value 2 is empty"}},
        {"3x3:1,2,3,4,5,6,7,8", {"3x3 needs 9 values, got 8"}},
        {"3x3:1,2,3,4,5,6,7,8,9,10", {"3x3 needs 9 values, got more"}},
        {"3x3:1,2,abc,4,5,6,7,8,9",
         {"filter \"3x3:1,2,abc,4,5,6,7,8,9\": value 3 \"abc\" is not a number"}},
        {"2x1:1,0x10", {"value 2 \"0x10\" is not a number"}},
        {"1x1:nan", {"value 1 \"nan\" is not a finite number"}},
        {"1x1:-inf", {"NaN and Inf are not allowed"}},
        {"1x1:1e999", {"\"1e999\" is out of range"}},
        {"3x3x3:1,2,3", {"filter \"3x3x3:1,2,3\": size \"3x3x3\" must be WxH, e.g. 3x3"}},
        {"3:1,2,3", {"size \"3\" must be WxH"}},
        {"3xa:1,2,3", {"size \"3xa\" must be WxH"}},
        {"0x3:1", {"filter \"0x3:1\": a 0x3 filter is empty"}},
        {"-3x3:1", {"a -3x3 filter is empty"}},
        {"99999x99999:1",
         {"filter \"99999x99999:1\": a 99999x99999 filter is too large (at most 1025 taps per "
          "side)"}},
        {"1025x1025:1", {"a 1025x1025 filter is too large (1050625 taps; at most 1048576)"}},
        {"99999999999x1:1", {"a 99999999999x1 filter is too large"}},
    };
    for (const Case& c : cases) {
        INFO("spec: \"" << c.spec << "\"");
        const std::string message = error_of(c.spec);
        for (const std::string& part : c.expected) CHECK_THAT(message, Catch::Contains(part));
    }
}

TEST_CASE("bad filter files name the file, the line and the problem", "[filters]") {
    const ScratchDir dir;
    struct Case {
        std::string name;
        std::string content;
        std::vector<std::string> expected;  // substrings, after "<path>"
    };
    const std::string big_row = [] {
        std::string s;
        for (int i = 0; i <= cudaconv::kMaxFilterSide; ++i) s += "1 ";
        return s + "\n";
    }();
    std::string many_rows = "# too tall\n";
    for (int i = 0; i <= cudaconv::kMaxFilterSide; ++i) many_rows += "1\n";
    const std::vector<Case> cases = {
        {"blur.txt",
         "1 2 3 4 5\n1 2 3 4 5\n1 2 3 4\n",
         {":3: row has 4 numbers, expected 5 (ragged rows"}},
        {"wider.txt",
         "# c\n1 2\n\n1 2 3\n",
         {":4: row has 3 numbers, expected 2 (ragged rows: line 2 has 2)"}},
        {"k.txt", "1 2\nabc 3\n", {":2: \"abc\" is not a number"}},
        {"k2.txt", "1 2\n3 4x\n", {":2: \"4x\" is not a number"}},
        {"nan.txt",
         "1 nan\n",
         {":1: \"nan\" is not a finite number (NaN and Inf are not allowed)"}},
        {"inf.txt", "\n# c\n1 -inf\n", {":3: \"-inf\" is not a finite number"}},
        {"huge.txt", "1 1e400\n", {":1: \"1e400\" is out of range"}},
        {"comments.txt", "# only comments\n\n   \n", {": no numbers in the file (empty filter)"}},
        {"empty.txt", "", {": file is empty (empty filter)"}},
        {"image.png",
         std::string("\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR", 16),
         {": a binary file, not a filter file (byte 0x1a at offset 6)"}},
        {"nul.txt", std::string("1 2\0 3\n", 7), {": a binary file", "byte 0x00 at offset 3"}},
        {"wide.txt", big_row, {":1: a 1026x1 filter is too large"}},
        {"tall.txt", many_rows, {":1027: a 1x1026 filter is too large"}},
        {"fields.mat",
         "3 3 1 0 5\n1 2 3\n",
         {":1: header must be \"W H [scale [offset]]\", got 5 fields"}},
        {"short.mat",
         "3\n1 2 3\n",
         {":1: header must be \"W H [scale [offset]]\", got only \"3\""}},
        {"letters.mat",
         "3 x\n",
         {":1: header must be \"W H [scale [offset]]\": height \"x\" is not an integer"}},
        {"float.mat", "3.0 3\n", {":1: header must be", "width \"3.0\" is not an integer"}},
        {"zero.mat", "0 3\n", {":1: header must be", "width must be at least 1, got 0"}},
        {"scale0.mat", "1 1 0\n5\n", {":1: scale must not be 0"}},
        {"tinyscale.mat",
         "2 2 1e-300\n1 1\n1e10 1\n",
         {":3: tap 1 divided by the scale is not a finite number"}},
        {"scale.mat", "1 1 abc\n5\n", {":1: header must be", "scale \"abc\" is not a number"}},
        {"offset.mat",
         "1 1 1 nan\n5\n",
         {":1: header must be", "offset \"nan\" is not a finite number"}},
        {"few.mat", "3 2\n1 2 3\n", {": 1 row, but the header says 2 (too few rows)"}},
        {"many.mat",
         "3 1\n1 2 3\n\n4 5 6\n",
         {":4: extra row: the header says 1 rows (too many rows)"}},
        {"narrow.mat",
         "3 2\n1 2 3\n1 2\n",
         {":3: row has 2 numbers, expected 3 (the header says 3 columns)"}},
        {"word.mat", "2 1\n1 two\n", {":2: \"two\" is not a number"}},
        {"big.mat", "99999 99999\n", {":1: a 99999x99999 filter is too large"}},
        {"blank.mat",
         "\n  \n# nothing\n",
         {": no header line \"W H [scale [offset]]\" (empty filter)"}},
    };
    for (const Case& c : cases) {
        const std::string path = dir.write(c.name, c.content);
        for (const std::string& spec : {path, "@" + path}) {
            INFO("spec: " << spec);
            const std::string message = error_of(spec);
            CHECK_THAT(message, Catch::StartsWith(path + ":"));
            for (const std::string& part : c.expected) CHECK_THAT(message, Catch::Contains(part));
        }
    }
}

TEST_CASE("files that cannot be read are refused by name", "[filters]") {
    const ScratchDir dir;
    fs::create_directory(dir.root() / "folder");
    CHECK_THAT(error_of("@" + dir.path("folder")),
               Catch::Equals(dir.path("folder") + ": is a directory, not a filter file"));
    CHECK_THAT(error_of(dir.path("folder")),
               Catch::Equals(dir.path("folder") + ": is a directory, not a filter file"));
    CHECK_THAT(error_of("@" + dir.path("missing.txt")),
               Catch::Equals(dir.path("missing.txt") + ": no such filter file"));

    const std::string locked = dir.write("locked.txt", "1\n");
    fs::permissions(locked, fs::perms::none);
    if (::geteuid() == 0) {
        WARN("running as root: permissions cannot make a file unreadable, skipping that check");
    } else {
        CHECK_THAT(error_of("@" + locked), Catch::StartsWith(locked + ": cannot read: "));
    }
}

TEST_CASE("absurd sizes are refused before anything is allocated", "[filters]") {
    // A 99999x99999 filter would need 80 GB; the refusal must not try.
    const auto start = std::chrono::steady_clock::now();
    CHECK_THROWS_AS(parse_filter_spec("99999x99999:1"), FilterError);
    CHECK_THROWS_AS(parse_filter_spec("box:99999x99999"), FilterError);
    const ScratchDir dir;
    CHECK_THROWS_AS(parse_filter_spec(dir.write("big.mat", "99999 99999 1\n1\n")), FilterError);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));

    // The largest filter allowed is accepted.
    const Filter f = parse_filter_spec("box:1024");
    CHECK(f.taps.size() == 1024u * 1024u);
    CHECK(static_cast<long>(f.taps.size()) <= cudaconv::kMaxFilterTaps);
}

TEST_CASE("1025 taps a side are allowed, 1025x1025 is refused for its tap count", "[filters]") {
    // Sides up to 1025 pass; the message for 1025x1025 names the limit it breaks.
    std::string row = "1025x1:1";
    for (int i = 1; i < 1025; ++i) row += ",1";
    CHECK(parse_filter_spec(row).taps.size() == 1025u);
    CHECK(parse_filter_spec("box:1025x1").width == 1025);
    for (const std::string spec :
         {"1025x1025:1", "box:1025", "gaussian:1025", "gaussian:sigma=170.5"}) {
        INFO("spec: " << spec);
        const std::string message = error_of(spec);
        CHECK_THAT(message, Catch::Contains("a 1025x1025 filter is too large (1050625 taps; at "
                                            "most 1048576)"));
        CHECK_THAT(message, !Catch::Contains("per side"));
    }
    CHECK_THAT(error_of("1026x1:1"),
               Catch::Contains("a 1026x1 filter is too large (at most 1025 taps per side)"));
}

TEST_CASE("specs, tokens and paths are echoed with their control bytes escaped", "[filters]") {
    const ScratchDir dir;
    const CurrentDir here(dir.root());
    dir.write("bad.txt", "1 \xff\xfe"
                         "2\n");
    struct Case {
        std::string spec;
        std::string expected;
    };
    const std::vector<Case> cases = {
        {"edgy\x1b[31m\r\ncudaconv: info: done",
         "unknown filter \"edgy\\x1b[31m\\x0d\\x0acudaconv\" in \"edgy\\x1b[31m\\x0d\\x0acudaconv: "
         "info: done\""},
        {"3x3:1,\x1b]0;title\x07", "value 2 \"\\x1b]0;title\\x07\" is not a number"},
        {"gaussian:5:\x9b"
         "1",
         "filter \"gaussian:5:\\x9b1\": sigma \"\\x9b1\" is not a number"},
        {"gaussian:5:\xc2\x9b"
         "1",
         "sigma \"\\xc2\\x9b1\" is not a number"},
        {"box:\x01\x02\x7f", "filter \"box:\\x01\\x02\\x7f\": size \"\\x01\\x02\\x7f\""},
        {"@no\nsuch\x1b.txt", "no\\x0asuch\\x1b.txt: no such filter file"},
        {"bad.txt", "bad.txt:1: \"\\xff\\xfe2\" is not a number"},
    };
    for (const Case& c : cases) {
        INFO("spec: " << c.spec);
        const std::string message = error_of(c.spec);
        CHECK_THAT(message, Catch::Contains(c.expected));
        CHECK_FALSE(has_control_bytes(message));
    }
    // Valid UTF-8 is kept as it is.
    CHECK_THAT(error_of("größe\xe2\x86\x92"), Catch::Contains("unknown filter \"größe→\""));
}

TEST_CASE("long specs are echoed shortened, file names whole", "[filters]") {
    const std::string long_name(300, 'a');
    const std::string message = error_of(long_name);
    CHECK_THAT(message, Catch::Contains("unknown filter \"" + std::string(80, 'a') + "...\""));
    CHECK(message.size() < 200);

    const std::string long_inline = "3x3:1,2,3,4,5,6,7,8,9" + std::string(300, '0') + ",x";
    const std::string inline_message = error_of(long_inline);
    CHECK_THAT(inline_message,
               Catch::StartsWith("filter \"" + long_inline.substr(0, 80) + "...\""));
    CHECK(inline_message.size() < 250);

    // An escape is never cut in half: the cut comes before it.
    const std::string escapes = std::string(78, 'b') + "\x1b" + std::string(10, 'b');
    CHECK_THAT(error_of(escapes), Catch::Contains("\"" + std::string(78, 'b') + "...\""));

    const std::string long_path = std::string(200, 'd') + "/k.txt";
    CHECK_THAT(error_of("@" + long_path), Catch::StartsWith(long_path + ": no such filter file"));
}

TEST_CASE("filter files are read a line at a time: line ends across blocks, line limit",
          "[filters]") {
    const ScratchDir dir;
    // \r\n split across the reader's 64 KiB blocks (the \r last in the
    // first), and long comment lines.
    const std::string text = "# " + std::string(65533, 'c') + "\r\n1 2\r\n3 4\r\n";
    CHECK(parse_filter_spec(dir.write("k.txt", text)).taps == std::vector<double>{1, 2, 3, 4});
    for (std::size_t pad = 65520; pad < 65530; ++pad) {
        const std::string mixed = "1 2\r\n# " + std::string(pad, 'c') + "\r\n3 4\r5 6\n";
        INFO("pad " << pad);
        CHECK(parse_filter_spec(dir.write("m.txt", mixed)).taps ==
              std::vector<double>{1, 2, 3, 4, 5, 6});
        CHECK(cudaconv::parse_plain_matrix(mixed, "m").taps ==
              std::vector<double>{1, 2, 3, 4, 5, 6});
    }

    // A line of 64 KiB is a line; one byte more is not a filter file's.
    const std::string longest = "1 # " + std::string(cudaconv::kMaxFilterLineBytes - 4, 'c');
    CHECK(parse_filter_spec(dir.write("longest.txt", "2\n" + longest + "\n")).taps ==
          std::vector<double>{2, 1});
    const std::string too_long = dir.write("long.txt", "2\n\n" + longest + "c\n3\n");
    CHECK_THAT(error_of(too_long),
               Catch::Equals(too_long + ":3: line longer than 64 KiB (not a filter file?)"));
    CHECK_THAT(error_of(dir.write("long.mat", "1 1\n" + std::string(100000, '1'))),
               Catch::Contains("long.mat:2: line longer than 64 KiB"));
    CHECK_THROWS_WITH(
        cudaconv::parse_libvips_matrix("1 1\n" + std::string(70000, ' ') + "1\n", "in.mat"),
        "in.mat:2: line longer than 64 KiB (not a filter file?)");
}
