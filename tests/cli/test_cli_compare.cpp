// `cudaconv compare` as CI uses it: exit codes, the printed metrics, JSON,
// the heat map, conversions, and two folders matched by relative path.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "support/run_command.hpp"

namespace cudaconv::test {
namespace fs = std::filesystem;

namespace {

// A 40x30 colour gradient, and the same with a few samples changed.
cv::Mat base_image() {
    cv::Mat m(30, 40, CV_8UC3);
    for (int y = 0; y < m.rows; ++y) {
        for (int x = 0; x < m.cols; ++x) m.at<cv::Vec3b>(y, x) = cv::Vec3b(x * 6, y * 8, 90);
    }
    return m;
}

cv::Mat changed_image() {
    cv::Mat m = base_image();
    m.at<cv::Vec3b>(7, 11)[2] = 95;  // off by 5: the worst
    m.at<cv::Vec3b>(20, 3)[0] += 1;  // off by 1
    return m;
}

void write(const fs::path& p, const cv::Mat& m) {
    fs::create_directories(p.parent_path());
    REQUIRE(cv::imwrite(p.string(), m));
}

}  // namespace

TEST_CASE("compare: identical images pass, and with no limits any difference fails",
          "[cli][compare]") {
    TempDir dir;
    write(dir / "a.png", base_image());
    write(dir / "b.png", base_image());
    write(dir / "c.png", changed_image());

    auto same = run_cudaconv({"compare", "a.png", "b.png"}, dir.path());
    CHECK(same.exit_code == 0);
    CHECK_THAT(same.out, Catch::StartsWith("ok"));
    CHECK_THAT(same.out, Catch::Contains("inf dB (identical)"));

    auto differ = run_cudaconv({"compare", "c.png", "b.png"}, dir.path());
    CHECK(differ.exit_code == 1);
    CHECK_THAT(differ.out, Catch::StartsWith("FAIL"));
    CHECK_THAT(differ.out, Catch::Contains("max-abs 5 > 0"));
    CHECK_THAT(differ.out, Catch::Contains("differing  2 of 1200 pixels"));
    // The worst pixel: where it is and both pixels' values (B, G, R).
    CHECK_THAT(differ.out, Catch::Contains("x=11 y=7 channel 2: 95 vs 90"));
}

TEST_CASE("compare: each threshold decides the exit code", "[cli][compare]") {
    TempDir dir;
    write(dir / "b.png", base_image());
    write(dir / "c.png", changed_image());
    struct Case {
        std::vector<std::string> limits;
        int exit_code;
    };
    const Case cases[] = {
        {{"--max-abs", "5"}, 0},
        {{"--max-abs", "4"}, 1},
        {{"--max-differing", "2"}, 0},
        {{"--max-differing", "1"}, 1},
        {{"--max-differing", "0.2%"}, 0},  // 2 of 1200 = 0.17%
        {{"--max-differing", "0.1%"}, 1},
        {{"--max-differing", "1", "--pixel-threshold", "1"}, 0},  // only the 5 counts
        {{"--min-psnr", "60"}, 0},
        {{"--min-psnr", "80"}, 1},
        {{"--max-rel", "0.022"}, 0},  // 5 relative to the largest |B|, 234: 0.0214
        {{"--max-rel", "0.021"}, 1},
        {{"--max-abs", "9", "--min-psnr", "80"}, 1},
    };
    for (const Case& c : cases) {
        std::vector<std::string> args{"compare", "c.png", "b.png"};
        args.insert(args.end(), c.limits.begin(), c.limits.end());
        const auto r = run_cudaconv(args, dir.path());
        INFO(args.back() << ": " << r.out << r.err);
        CHECK(r.exit_code == c.exit_code);
    }
}

TEST_CASE("compare: errors exit 2 with one line naming the file", "[cli][compare][errors]") {
    TempDir dir;
    write(dir / "b.png", base_image());
    write(dir / "gray.png", cv::Mat(30, 40, CV_8UC1, cv::Scalar(3)));
    write(dir / "small.png", cv::Mat(29, 40, CV_8UC3, cv::Scalar(3)));
    write(dir / "deep.png", cv::Mat(30, 40, CV_16UC3, cv::Scalar(3)));
    fs::create_directories(dir / "folder");
    struct Case {
        std::vector<std::string> args;
        std::string message;
    };
    const Case cases[] = {
        {{"missing.png", "b.png"}, "missing.png: no such file"},
        {{"small.png", "b.png"}, "sizes differ: 40x29 vs 40x30"},
        {{"gray.png", "b.png"}, "channels differ: 1 vs 3"},
        {{"deep.png", "b.png"}, "depths differ: u16 vs u8"},
        {{"folder", "b.png"}, "folder is a folder and b.png is not"},
        {{"b.png", "b.png", "--diff", "b.png"}, "would overwrite an input"},
        {{"b.png", "b.png", "--diff", "heat.pfm"}, "heat.pfm"},
        {{"b.png", "b.png", "--max-differing", "lots"}, "--max-differing lots"},
        {{"b.png", "b.png", "--max-abs", "-1"}, "--max-abs"},
    };
    for (const Case& c : cases) {
        std::vector<std::string> args{"compare"};
        args.insert(args.end(), c.args.begin(), c.args.end());
        const auto r = run_cudaconv(args, dir.path());
        INFO(r.err);
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Contains(c.message));
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    }
    CHECK_FALSE(fs::exists(dir / "heat.pfm"));
}

TEST_CASE("compare: --depth and --ignore-alpha say how to convert", "[cli][compare]") {
    TempDir dir;
    const cv::Mat colour = base_image();
    cv::Mat deep;
    colour.convertTo(deep, CV_16UC3);
    cv::Mat with_alpha;
    cv::cvtColor(colour, with_alpha, cv::COLOR_BGR2BGRA);
    write(dir / "b.png", colour);
    write(dir / "deep.png", deep);
    write(dir / "alpha.png", with_alpha);
    CHECK(run_cudaconv({"compare", "deep.png", "b.png", "--depth", "u16"}, dir.path()).exit_code ==
          0);
    CHECK(run_cudaconv({"compare", "alpha.png", "b.png", "--ignore-alpha"}, dir.path()).exit_code ==
          0);
}

TEST_CASE("compare: --json and --diff", "[cli][compare]") {
    TempDir dir;
    write(dir / "b.png", base_image());
    write(dir / "c.png", changed_image());
    const auto r = run_cudaconv(
        {"compare", "c.png", "b.png", "--max-abs", "1", "--json", "--diff", "heat.png"},
        dir.path());
    CHECK(r.exit_code == 1);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["status"] == "fail");
    CHECK(j["max_abs"] == 5.0);
    CHECK(j["differing_pixels"] == 2);
    CHECK(j["worst"]["x"] == 11);
    CHECK(j["worst"]["y"] == 7);
    CHECK(j["worst"]["a"] == nlohmann::json({0.0 + 11 * 6, 7 * 8, 95}));
    CHECK(j["violations"][0] == "max-abs 5 > 1");
    CHECK(j["diff_image"] == "heat.png");
    const cv::Mat heat = cv::imread((dir / "heat.png").string(), cv::IMREAD_UNCHANGED);
    REQUIRE(heat.type() == CV_8UC3);
    CHECK(heat.size() == cv::Size(40, 30));
    CHECK(cv::norm(heat.at<cv::Vec3b>(0, 0)) < 10);    // equal: black
    CHECK(cv::norm(heat.at<cv::Vec3b>(7, 11)) > 100);  // the worst pixel shows

    // Identical images: psnr is null in JSON (no infinity there), identical true.
    const auto same = run_cudaconv({"compare", "b.png", "b.png", "--json"}, dir.path());
    const auto js = nlohmann::json::parse(same.out);
    CHECK(js["identical"] == true);
    CHECK(js["psnr"].is_null());
    CHECK(js["status"] == "ok");
}

TEST_CASE("compare: two folders, matched by relative path, missing and extra files",
          "[cli][compare]") {
    TempDir dir;
    write(dir / "out" / "a.png", base_image());
    write(dir / "golden" / "a.png", base_image());
    write(dir / "out" / "sub" / "b.png", changed_image());
    write(dir / "golden" / "sub" / "b.png", base_image());
    write(dir / "golden" / "only-expected.png", base_image());
    write(dir / "out" / "only-output.png", base_image());
    std::ofstream(dir / "out" / "notes.txt") << "not an image\n";

    const auto r =
        run_cudaconv({"compare", "out", "golden", "--max-abs", "1", "--diff", "heat"}, dir.path());
    INFO(r.out << r.err);
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.out, Catch::Contains("ok      a.png"));
    CHECK_THAT(r.out, Catch::Contains("FAIL    sub/b.png"));
    CHECK_THAT(r.out, Catch::Contains("missing only-expected.png"));
    CHECK_THAT(r.out, Catch::Contains("extra   only-output.png"));
    CHECK_THAT(r.out, Catch::Contains("2 compared, 1 ok, 1 outside limits, 1 missing, 1 extra"));
    CHECK_FALSE(r.out.find("notes.txt") != std::string::npos);
    // A heat map for the differing file only, mirrored under --diff.
    CHECK(fs::exists(dir / "heat" / "sub" / "b.png"));
    CHECK_FALSE(fs::exists(dir / "heat" / "a.png"));

    // Within limits, with extra files allowed: exit 0 once nothing is missing.
    fs::remove(dir / "golden" / "only-expected.png");
    const auto ok = run_cudaconv(
        {"compare", "out", "golden", "--max-abs", "5", "--ignore-extra", "--json"}, dir.path());
    INFO(ok.out << ok.err);
    CHECK(ok.exit_code == 0);
    const auto j = nlohmann::json::parse(ok.out);
    CHECK(j["ok"] == true);
    CHECK(j["summary"]["compared"] == 2);
    CHECK(j["summary"]["extra"] == 1);
    CHECK(j["files"].size() == 3);

    // A file that cannot be read makes the comparison an error (exit 2).
    std::ofstream(dir / "out" / "a.png", std::ios::trunc) << "broken";
    CHECK(run_cudaconv({"compare", "out", "golden", "--max-abs", "5", "--ignore-extra"}, dir.path())
              .exit_code == 2);
}

}  // namespace cudaconv::test
