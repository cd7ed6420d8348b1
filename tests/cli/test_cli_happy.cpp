// The CLI as a user runs it: the built binary, in a temporary folder.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include "support/compare.hpp"
#include "support/files.hpp"
#include "support/run_command.hpp"

namespace cudaconv::test {
namespace fs = std::filesystem;

TEST_CASE("one image, auto, says at -v which variant ran and why", "[cli]") {
    TempDir dir;
    const auto r =
        run_cudaconv({sample("camera.png"), "-f", "edge", "-v", "-o", "edge.png"}, dir.path());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    // cpu-ref without a device, a CUDA variant with one; either way with a reason.
    CHECK_THAT(r.err, Catch::Matches("(.|\n)*cudaconv: debug: auto: [a-z-]+ \\(.+\\)\n(.|\n)*"));
    const cv::Mat out = cv::imread((dir / "edge.png").string(), cv::IMREAD_UNCHANGED);
    REQUIRE(out.size() == cv::Size(512, 512));
    CHECK(out.type() == CV_8UC1);
    CHECK(dir.entries() == std::vector<std::string>{"edge.png"});
}

// One cheap image under -k auto runs on the CPU, whatever the machine has,
// because the CPU finishes it before CUDA could start; the same job in a
// batch of two does not get that reason (nor, in test_auto_select, one with
// many timed runs).
TEST_CASE("auto runs one cheap image on the CPU, and says so", "[cli]") {
    TempDir dir;
    auto r = run_cudaconv({sample("camera.png"), "-f", "edge", "-v", "-o", "one.png"}, dir.path());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.err, Catch::Contains("cudaconv: debug: auto: cpu (one image: the CPU should "
                                      "take about "));
    CHECK_THAT(r.err, Catch::Contains("less than CUDA's start-up"));

    r = run_cudaconv(
        {sample("camera.png"), sample("chelsea.png"), "-f", "edge", "-v", "-o", "two/"},
        dir.path());
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.err, !Catch::Contains("one image:"));
}

// Like cp and convert: a run that did all it was asked prints nothing.
// What ran (auto's choice, a line per image, a batch's summary) is -v's;
// warnings and a batch's failures are still shown.
TEST_CASE("silent on success, -v says what ran, warnings and failures still show", "[cli]") {
    TempDir dir;
    const std::string cam = sample("camera.png");
    const std::string chelsea = sample("chelsea.png");
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{cam, "-f", "edge", "-o", "one.png"},
          {cam, chelsea, "-f", "edge", "-o", "two/"},
          {cam, chelsea, "-f", "edge", "-o", "info/", "--log-level", "info"},
          {cam, "-f", "none", "-o", "none.png"}}) {
        const auto r = run_cudaconv(args, dir.path());
        INFO(args.back() << ": " << r.err);
        CHECK(r.exit_code == 0);
        CHECK(r.err.empty());
        CHECK(r.out.empty());
    }

    auto r = run_cudaconv({cam, chelsea, "-f", "edge", "-v", "-o", "verbose/"}, dir.path());
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.err, Catch::Contains("cudaconv: debug: auto: "));
    CHECK_THAT(r.err, Catch::Contains("debug: " + cam + " -> verbose/camera.png (512x512, edge, "));
    CHECK_THAT(r.err, Catch::Contains("debug: " + chelsea + " -> verbose/chelsea.png (451x300, "));
    CHECK_THAT(r.err, Catch::Contains("debug: done 2, skipped 0, failed 0 of 2 images"));

    r = run_cudaconv({cam, "-f", "edge", "--border-value", "3", "-o", "warned.png"}, dir.path());
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.err, Catch::StartsWith("cudaconv: warning: --border-value"));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);

    write_file(dir / "broken.png", "not an image");
    r = run_cudaconv({cam, "broken.png", "-f", "edge", "-o", "failed/"}, dir.path());
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.err, Catch::Contains("cudaconv: error: broken.png: "));
    CHECK_THAT(r.err, Catch::Contains("cudaconv: info: done 1, skipped 0, failed 1 of 2 images"));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 2);
}

TEST_CASE("quiet is silent on success, timings print every stage", "[cli]") {
    TempDir dir;
    auto r = run_cudaconv({sample("chelsea.png"), "-f", "box:3", "-q", "-o", "a.png"}, dir.path());
    CHECK(r.exit_code == 0);
    CHECK(r.err.empty());
    CHECK(r.out.empty());

    r = run_cudaconv({sample("chelsea.png"), "-f", "box:3", "-q", "--timings", "--repeat", "3",
                      "--warmup", "1", "-o", "b.png"},
                     dir.path());
    REQUIRE(r.exit_code == 0);
    for (const char* stage : {"decode", "upload", "filter", "download", "encode", "total"}) {
        CHECK_THAT(r.out, Catch::Contains(stage));
    }
    CHECK_THAT(r.out, Catch::Contains("median of 3"));
    CHECK_THAT(r.out, Catch::Contains("Mpix/s"));
}

TEST_CASE("json writes one line per image with the timings, then a summary", "[cli]") {
    TempDir dir;
    const auto r = run_cudaconv({sample("camera.png"), sample("chelsea.png"), "-f", "sobel-x", "-k",
                                 "cpu-ref", "-o", "out/", "--json", "t.json", "--repeat", "2"},
                                dir.path());
    REQUIRE(r.exit_code == 0);
    std::ifstream in(dir / "t.json");
    std::string line;
    int lines = 0;
    nlohmann::json summary;
    while (std::getline(in, line)) {
        const auto j = nlohmann::json::parse(line);
        if (j.contains("summary")) {
            summary = j;
            continue;
        }
        CHECK(j["status"] == "done");
        CHECK(j["variant"] == "cpu-ref");
        CHECK(j["filter_runs"]["count"] == 2);
        CHECK(j["timings_ms"]["total"].get<double>() > 0.0);
        CHECK(j["filter"]["width"] == 3);
        ++lines;
    }
    CHECK(lines == 2);
    CHECK(summary["done"] == 2);
    CHECK(summary["failed"] == 0);
    CHECK(summary["total"] == 2);
    CHECK(fs::exists(dir / "out" / "camera.png"));
    CHECK(fs::exists(dir / "out" / "chelsea.png"));
}

// The same pixels; not always the same bytes: -k auto runs a file it can
// size up front on the CPU where that is quicker than starting CUDA, but
// stdin on the GPU, whose PNGs are compressed there (another encoder).
TEST_CASE("stdin to stdout gives the same image as files", "[cli]") {
    TempDir dir;
    const auto by_file =
        run_cudaconv({sample("chelsea.png"), "-f", "emboss", "-o", "file.png"}, dir.path());
    REQUIRE(by_file.exit_code == 0);
    const auto by_pipe = run_cudaconv({"-", "-f", "emboss", "-o", "-", "--format", "png"},
                                      dir.path(), read_bytes(sample("chelsea.png")));
    REQUIRE(by_pipe.exit_code == 0);
    const std::string piped = by_pipe.out;
    const cv::Mat from_pipe =
        cv::imdecode(std::vector<std::uint8_t>(piped.begin(), piped.end()), cv::IMREAD_UNCHANGED);
    const cv::Mat from_file = cv::imread((dir / "file.png").string(), cv::IMREAD_UNCHANGED);
    REQUIRE(!from_pipe.empty());
    REQUIRE(from_pipe.type() == from_file.type());
    CHECK(cv::norm(from_pipe, from_file, cv::NORM_INF) == 0);
}

TEST_CASE("templates name outputs by stem, extension, filter and variant", "[cli]") {
    TempDir dir;
    const auto r =
        run_cudaconv({sample("camera.png"), sample("rocket.jpg"), "-f", "gaussian:sigma=1.5", "-k",
                      "cpu-ref", "-o", "res/{stem}-{filter}-{kernel}.png"},
                     dir.path());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(fs::exists(dir / "res" / "camera-gaussian-sigma-1.5-cpu-ref.png"));
    CHECK(fs::exists(dir / "res" / "rocket-gaussian-sigma-1.5-cpu-ref.png"));
}

TEST_CASE("float output to .pfm, 16-bit input kept 16-bit", "[cli]") {
    TempDir dir;
    auto r = run_cudaconv(
        {sample("camera-16bit.png"), "-f", "laplacian", "--depth", "f32", "-o", "lap.pfm"},
        dir.path());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    cv::Mat out = cv::imread((dir / "lap.pfm").string(), cv::IMREAD_UNCHANGED);
    CHECK(out.type() == CV_32FC1);

    r = run_cudaconv({sample("camera-16bit.png"), "-f", "box:5", "-o", "box.png"}, dir.path());
    REQUIRE(r.exit_code == 0);
    out = cv::imread((dir / "box.png").string(), cv::IMREAD_UNCHANGED);
    CHECK(out.type() == CV_16UC1);
}

TEST_CASE("alpha is kept unless --alpha filter", "[cli]") {
    TempDir dir;
    REQUIRE(run_cudaconv({sample("chelsea-alpha.png"), "-f", "box:9", "-o", "keep.png"}, dir.path())
                .exit_code == 0);
    REQUIRE(run_cudaconv({sample("chelsea-alpha.png"), "-f", "box:9", "--alpha", "filter", "-o",
                          "filter.png"},
                         dir.path())
                .exit_code == 0);
    const cv::Mat in = cv::imread(sample("chelsea-alpha.png"), cv::IMREAD_UNCHANGED);
    const cv::Mat keep = cv::imread((dir / "keep.png").string(), cv::IMREAD_UNCHANGED);
    const cv::Mat filtered = cv::imread((dir / "filter.png").string(), cv::IMREAD_UNCHANGED);
    cv::Mat a_in, a_keep, a_filtered;
    cv::extractChannel(in, a_in, 3);
    cv::extractChannel(keep, a_keep, 3);
    cv::extractChannel(filtered, a_filtered, 3);
    CHECK(cv::norm(a_in, a_keep, cv::NORM_INF) == 0.0);
    CHECK(cv::norm(a_in, a_filtered, cv::NORM_INF) > 0.0);
}

TEST_CASE("list and help", "[cli]") {
    auto r = run_cudaconv({"list", "filters"});
    CHECK(r.exit_code == 0);
    // One plain line a filter; how it is made and its taps at -v.
    CHECK_THAT(r.out, Catch::Contains("\nedge ") && Catch::Contains("\ngaussian:sigma=S "));
    CHECK_THAT(r.out, !Catch::Contains("cv::") && !Catch::Contains("-1"));
    CHECK_THAT(r.out, Catch::Contains("-v shows how each is made"));
    r = run_cudaconv({"list", "filters", "-v"});
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("as cv::Sobel(dx=1, dy=0)"));
    CHECK_THAT(r.out, Catch::Contains("-1"));  // the edge taps are printed
    r = run_cudaconv({"list", "kernels"});
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("cpu-ref"));
    // The composites' named paths, indented under each.
    CHECK_THAT(r.out, Catch::Contains("\nfast ") && Catch::Contains("\n  fast.strips ") &&
                          Catch::Contains("\n  fast.mma ") &&
                          Catch::Contains("\n  fast-separable.strips "));
    r = run_cudaconv({"list", "devices"});
    CHECK(r.exit_code == 0);
    r = run_cudaconv({"list", "Kernels"});  // any case, as -f and -k
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("cpu-ref"));
    r = run_cudaconv({"list", "bogus"});
    CHECK(r.exit_code == 2);
    r = run_cudaconv({"--help"});
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("Examples"));
    CHECK_THAT(r.out, Catch::Contains("--border"));
}

// Nothing asked: what can be, not a missing option's name. `cudaconv`
// alone is a usage error (exit 2) that lists the commands; `help` is
// --help, for a command too; `list` alone names what it lists.
// An 80-column terminal shows the listings and the short usages whole:
// a description too long for its line goes on below, under where it began.
TEST_CASE("list and the short usages keep within 80 columns", "[cli]") {
    const std::vector<std::vector<std::string>> commands{{"list", "filters"},
                                                         {"list", "kernels"},
                                                         {"list", "devices"},
                                                         {"list", "--help"},
                                                         {},
                                                         {"list"}};
    for (const auto& args : commands) {
        const auto r = run_cudaconv(args);
        const std::string shown = r.out + r.err;
        INFO("cudaconv " << (args.empty() ? "" : args[0])
                         << (args.size() > 1 ? " " + args[1] : ""));
        CHECK_FALSE(shown.empty());
        std::istringstream lines(shown);
        for (std::string line; std::getline(lines, line);) {
            const auto columns = std::count_if(line.begin(), line.end(), [](char c) {
                return (static_cast<unsigned char>(c) & 0xC0) != 0x80;  // UTF-8: not a continuation
            });
            INFO(line);
            CHECK(columns <= 80);
        }
    }
}

TEST_CASE("cudaconv alone, help and list alone say what can be run", "[cli]") {
    auto r = run_cudaconv({});
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Catch::StartsWith("Usage:\n  cudaconv INPUT... -f FILTER -o OUTPUT"));
    CHECK_THAT(r.err, Catch::Contains("cudaconv help [list|compare|bench]") &&
                          Catch::Contains("'cudaconv --help' lists every option"));
    CHECK_THAT(r.err, !Catch::Contains("required"));
    r = run_cudaconv({"help"});
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("--border") && Catch::Contains("Examples"));
    r = run_cudaconv({"help", "bench"});
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("--peer") && Catch::Contains("cudaconv bench"));
    r = run_cudaconv({"help", "compare"});
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("--max-abs"));
    r = run_cudaconv({"help", "nope"});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("help: no command \"nope\" (list, compare or bench"));
    r = run_cudaconv({"list"});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("list what? cudaconv list filters, kernels or devices"));
    CHECK_THAT(r.err, !Catch::Contains("required"));
}

TEST_CASE("variant names: -k takes them in any case, as -f takes filters", "[cli]") {
    TempDir dir;
    const std::string cam = sample("camera.png");
    auto r = run_cudaconv({cam, "-f", "EDGE", "-k", "CPU-Ref", "--json", "-", "-o", "upper.png"},
                          dir.path());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(nlohmann::json::parse(r.out.substr(0, r.out.find('\n')))["variant"] == "cpu-ref");
    r = run_cudaconv({cam, "-f", "edge", "-k", "cpu-ref", "-o", "lower.png"}, dir.path());
    REQUIRE(r.exit_code == 0);
    CHECK(read_bytes(dir / "upper.png") == read_bytes(dir / "lower.png"));
    r = run_cudaconv({cam, "-f", "edge", "-k", "AUTO", "-o", "auto.png"}, dir.path());
    CHECK(r.exit_code == 0);
    r = run_cudaconv({"bench", "--size", "8x8", "-f", "edge", "-k", "CPU"}, dir.path());
    INFO(r.err);
    CHECK(r.exit_code == 0);
    r = run_cudaconv({cam, "-f", "edge", "-k", "FASTER", "-o", "x.png"}, dir.path());
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("-k \"faster\": unknown variant"));
}

}  // namespace cudaconv::test
