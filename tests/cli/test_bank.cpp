// Filter banks as users write them (--combine): the gradient magnitude of
// sobel-x and sobel-y, an oriented bank's max and a sum, each against
// OpenCV in double on the sample photos; a stack to one .npy, or to one
// file a filter ({filter} in -o) equal to each filter run alone; what a
// bank cannot mean is refused before any work.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <opencv2/imgcodecs.hpp>

#include "core/bank.hpp"
#include "io/npy.hpp"
#include "io/output_path.hpp"
#include "filters/spec.hpp"
#include "support/files.hpp"
#include "support/opencv_reference.hpp"
#include "support/run_command.hpp"
#include "support/skip_without_device.hpp"

namespace cudaconv::test {
namespace fs = std::filesystem;

namespace {

cv::Mat read(const fs::path& path) { return cv::imread(path.string(), cv::IMREAD_UNCHANGED); }

// The bank's exact result in double (reference_exact: copyMakeBorder and
// filter2D), combined, scaled and rounded with cv::saturate_cast.
cv::Mat expected_bank(const cv::Mat& src, const std::vector<std::string>& specs,
                      const std::string& how, double scale, int out_type) {
    std::vector<cv::Mat> responses;
    for (const std::string& spec : specs) {
        responses.push_back(reference_exact(src, centred_params(parse_filter_spec(spec))));
    }
    cv::Mat combined = cv::Mat::zeros(responses.front().size(), responses.front().type());
    if (how == "max") combined = responses.front().clone();
    for (const cv::Mat& r : responses) {
        if (how == "magnitude") combined += r.mul(r);
        if (how == "sum") combined += r;
        if (how == "max") combined = cv::max(combined, r);
    }
    if (how == "magnitude") cv::sqrt(combined, combined);
    cv::Mat out;
    combined.convertTo(out, out_type, scale);
    return out;
}

}  // namespace

TEST_CASE("bank: magnitude, max and sum equal OpenCV in double", "[cli][bank]") {
    TempDir dir;
    struct Case {
        std::string how;
        std::vector<std::string> filters;
        double scale;
    };
    const std::vector<Case> cases{
        {"magnitude", {"sobel-x", "sobel-y"}, 1.0},
        {"magnitude", {"scharr-x", "scharr-y"}, 0.25},
        {"max", {"prewitt-x", "prewitt-y", "3x3:1,1,1,0,0,0,-1,-1,-1", "edge"}, 1.0},
        {"sum", {"box:3", "gaussian:5", "sharpen"}, 0.5},
    };
    for (const char* sample : {"camera-crop.png", "chelsea-crop.png", "camera16-crop.png"}) {
        copy_sample(sample, dir / sample);
        const cv::Mat src = read(dir / sample);
        for (const Case& c : cases) {
            for (const char* variant : {"cpu-ref", "cpu"}) {
                std::vector<std::string> args{sample,
                                              "--combine",
                                              c.how,
                                              "-k",
                                              variant,
                                              "--scale",
                                              std::to_string(c.scale),
                                              "-o",
                                              "out.png",
                                              "--overwrite"};
                for (const std::string& f : c.filters) args.insert(args.end(), {"-f", f});
                const auto r = run_cudaconv(args, dir.path());
                INFO(sample << " " << c.how << " on " << variant << ": " << r.err);
                REQUIRE(r.exit_code == 0);
                const cv::Mat out = read(dir / "out.png");
                const cv::Mat expected = expected_bank(src, c.filters, c.how, c.scale, out.type());
                CHECK(cv::norm(out, expected, cv::NORM_INF) <= 1.0);
            }
        }
    }
}

TEST_CASE("bank: {filter}, --json and --abs", "[cli][bank]") {
    TempDir dir;
    copy_sample("camera-crop.png", dir / "in.png");
    const auto r =
        run_cudaconv({"in.png", "-f", "sobel-x", "-f", "sobel-y", "--combine", "sum", "--abs",
                      "--depth", "u16", "-o", "{stem}-{filter}.png", "--json", "-"},
                     dir.path());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(fs::exists(dir / "in-sum-sobel-x-sobel-y.png"));
    const auto line = nlohmann::json::parse(r.out.substr(0, r.out.find('\n')));
    CHECK(line["filter"]["spec"] == "sum:sobel-x,sobel-y");
    CHECK(line["filter"]["width"] == 3);
    // |sobel-x + sobel-y|, not |sobel-x| + |sobel-y|.
    const cv::Mat src = read(dir / "in.png");
    cv::Mat expected = cv::abs(expected_bank(src, {"sobel-x", "sobel-y"}, "sum", 1.0, CV_64FC1));
    expected.convertTo(expected, CV_16U);
    CHECK(cv::norm(read(dir / "in-sum-sobel-x-sobel-y.png"), expected, cv::NORM_INF) <= 1.0);
}

TEST_CASE("bank: stack writes every response to .npy, as NumPy reads it", "[cli][bank]") {
    TempDir dir;
    copy_sample("chelsea-alpha-crop.png", dir / "in.png");
    const auto r = run_cudaconv({"in.png", "-f", "sobel-x", "-f", "box:3", "-f", "laplacian",
                                 "--combine", "stack", "-o", "out.npy"},
                                dir.path());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const std::string file = read_bytes(dir / "out.npy");
    const NpyArray array =
        parse_npy(reinterpret_cast<const std::uint8_t*>(file.data()), file.size());
    const cv::Mat src = read(dir / "in.png");
    REQUIRE(array.shape ==
            std::vector<std::int64_t>{src.rows, src.cols, 3 * 3 + 1});  // 3 filters x RGB, alpha
    std::vector<cv::Mat> planes;
    cv::split(src, planes);
    const std::vector<std::string> filters{"sobel-x", "box:3", "laplacian"};
    for (std::size_t k = 0; k < filters.size(); ++k) {
        for (int c = 0; c < 3; ++c) {
            const cv::Mat expected =
                reference_exact(planes[c], centred_params(parse_filter_spec(filters[k])));
            double worst = 0.0;
            for (int y = 0; y < src.rows; ++y) {
                for (int x = 0; x < src.cols; ++x) {
                    // .npy holds RGB: OpenCV's plane c (BGR) is channel 2 - c.
                    const float got = array.data[(static_cast<std::size_t>(y) * src.cols + x) * 10 +
                                                 k * 3 + (2 - c)];
                    worst = std::max(worst, std::abs(got - expected.at<double>(y, x)));
                }
            }
            INFO(filters[k] << ", channel " << c);
            CHECK(worst <= 1e-3);
        }
    }
    // The alpha, unchanged, last.
    for (int y = 0; y < src.rows; ++y) {
        for (int x = 0; x < src.cols; ++x) {
            CHECK(array.data[(static_cast<std::size_t>(y) * src.cols + x) * 10 + 9] ==
                  static_cast<float>(planes[3].at<std::uint8_t>(y, x)));
        }
    }
}

TEST_CASE("bank: stack with {filter} writes one file a filter, as the filter alone",
          "[cli][bank][stack]") {
    TempDir dir;
    copy_sample("chelsea-alpha-crop.png", dir / "in.png");
    // Integer taps: each response is exact in float32, so the bank's
    // rounding and the filter's alone agree to the last bit.
    const std::vector<std::string> filters{"sobel-x", "laplacian", "3x3:0,2,0,0,0,-1,1,0,0"};
    struct Form {
        std::string depth;
        std::string ext;
    };
    std::vector<Form> forms{{"u8", "png"}, {"u8", "jpg"}};
    // The GPU machine's static OpenCV writes no TIFF.
    if (cv::haveImageWriter("x.tif")) forms.insert(forms.end(), {{"u16", "tif"}, {"f32", "tif"}});
    for (const char* variant : {"cpu-ref", "cpu"}) {
        for (const Form& form : forms) {
            const std::vector<std::string> options{"-k",      variant,      "--depth", form.depth,
                                                   "--scale", "0.5",        "--delta", "100",
                                                   "--abs",   "--overwrite"};
            std::vector<std::string> args{"in.png", "--combine", "stack", "-o",
                                          "each/{stem}-{filter}." + form.ext};
            for (const std::string& f : filters) args.insert(args.end(), {"-f", f});
            args.insert(args.end(), options.begin(), options.end());
            const auto r = run_cudaconv(args, dir.path());
            INFO(variant << ", " << form.depth << " " << form.ext << ": " << r.err);
            REQUIRE(r.exit_code == 0);
            for (const std::string& f : filters) {
                std::vector<std::string> alone{"in.png", "-f", f, "-o", "alone." + form.ext};
                alone.insert(alone.end(), options.begin(), options.end());
                REQUIRE(run_cudaconv(alone, dir.path()).exit_code == 0);
                INFO(f);
                const cv::Mat each =
                    read(dir / "each" / ("in-" + file_name_safe(f) + "." + form.ext));
                const cv::Mat expected = read(dir / ("alone." + form.ext));
                REQUIRE(each.type() == expected.type());
                REQUIRE(each.size() == expected.size());
                CHECK(cv::norm(each, expected, cv::NORM_INF) == 0.0);
            }
        }
    }
}

TEST_CASE("bank: stack's files a filter hold the stacked .npy's channels", "[cli][bank][stack]") {
    TempDir dir;
    copy_sample("chelsea-alpha-crop.png", dir / "in.png");
    const std::vector<std::string> filters{"sobel-x", "box:3", "gaussian:sigma=1.5"};
    std::vector<std::string> bank{"in.png", "--combine", "stack", "--scale", "0.25", "-k", "cpu"};
    for (const std::string& f : filters) bank.insert(bank.end(), {"-f", f});
    auto stacked = bank;
    stacked.insert(stacked.end(), {"-o", "all.npy"});
    REQUIRE(run_cudaconv(stacked, dir.path()).exit_code == 0);
    auto each = bank;
    each.insert(each.end(), {"-o", "{filter}/{stem}.npy", "--json", "-"});
    const auto r = run_cudaconv(each, dir.path());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto line = nlohmann::json::parse(r.out.substr(0, r.out.find('\n')));
    CHECK(line["output"] == "sobel-x/in.npy");
    CHECK(line["outputs"] ==
          nlohmann::json::array({"sobel-x/in.npy", "box-3/in.npy", "gaussian-sigma-1.5/in.npy"}));
    CHECK(line["output_image"]["channels"] == 4);
    CHECK(line["output_image"]["depth"] == "f32");

    const std::string all_bytes = read_bytes(dir / "all.npy");
    const NpyArray all =
        parse_npy(reinterpret_cast<const std::uint8_t*>(all_bytes.data()), all_bytes.size());
    const std::size_t pixels = static_cast<std::size_t>(all.shape[0] * all.shape[1]);
    for (std::size_t k = 0; k < filters.size(); ++k) {
        INFO(filters[k]);
        const std::string bytes = read_bytes(dir / file_name_safe(filters[k]) / "in.npy");
        const NpyArray one =
            parse_npy(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
        REQUIRE(one.shape == std::vector<std::int64_t>{all.shape[0], all.shape[1], 4});
        std::size_t differ = 0;
        for (std::size_t i = 0; i < pixels; ++i) {
            for (std::size_t c = 0; c < 3; ++c) {  // RGB in both
                differ += one.data[i * 4 + c] != all.data[i * 10 + k * 3 + c];
            }
            differ += one.data[i * 4 + 3] != all.data[i * 10 + 9];  // the alpha, kept
        }
        CHECK(differ == 0);
    }
}

TEST_CASE("bank: stack's files a filter and existing files", "[cli][bank][stack]") {
    TempDir dir;
    copy_sample("camera-crop.png", dir / "in.png");
    std::vector<std::string> args{"in.png", "-f", "sobel-x", "-f", "sobel-y", "--combine", "stack"};
    args.insert(args.end(), {"--depth", "u8", "-o", "{stem}-{filter}.png", "-k", "cpu-ref"});
    const auto run = [&](std::vector<std::string> more) {
        more.insert(more.begin(), args.begin(), args.end());
        return run_cudaconv(more, dir.path());
    };
    REQUIRE(run({}).exit_code == 0);
    const std::string sobel_y = read_bytes(dir / "in-sobel-y.png");

    // One file missing: without --skip-existing or --overwrite, exit 2 and
    // nothing written; with --skip-existing the missing one is written and
    // the one there kept.
    fs::remove(dir / "in-sobel-x.png");
    write_file(dir / "in-sobel-y.png", "kept");
    auto r = run({});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("exists already: in-sobel-y.png"));
    CHECK_FALSE(fs::exists(dir / "in-sobel-x.png"));
    // Nor is a folder made for the other filter's file.
    fs::create_directory(dir / "sobel-y");
    write_file(dir / "sobel-y" / "in.png", "kept");
    r = run_cudaconv({"in.png", "-f", "sobel-x", "-f", "sobel-y", "--combine", "stack", "--depth",
                      "u8", "-o", "{filter}/{stem}.png"},
                     dir.path());
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("exists already: sobel-y/in.png"));
    CHECK_FALSE(fs::exists(dir / "sobel-x"));
    r = run({"--skip-existing", "--json", "-"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    auto line = nlohmann::json::parse(r.out.substr(0, r.out.find('\n')));
    CHECK(line["status"] == "done");
    CHECK(line["outputs"] == nlohmann::json::array({"in-sobel-x.png"}));
    CHECK(fs::exists(dir / "in-sobel-x.png"));
    CHECK(read_bytes(dir / "in-sobel-y.png") == "kept");

    // All there: the input is skipped.
    r = run({"--skip-existing", "--json", "-"});
    REQUIRE(r.exit_code == 0);
    line = nlohmann::json::parse(r.out.substr(0, r.out.find('\n')));
    CHECK(line["status"] == "skipped");
    CHECK(read_bytes(dir / "in-sobel-y.png") == "kept");

    // A file that cannot be written (a folder in its place, which
    // --overwrite does not replace): the input fails, and the other
    // filter's file is not written either.
    fs::remove(dir / "in-sobel-x.png");
    fs::remove(dir / "in-sobel-y.png");
    fs::create_directory(dir / "in-sobel-y.png");
    r = run({"--overwrite"});
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.err, Catch::Contains("in-sobel-y.png: is a directory"));
    CHECK_FALSE(fs::exists(dir / "in-sobel-x.png"));
    CHECK(fs::is_directory(dir / "in-sobel-y.png"));
    fs::remove(dir / "in-sobel-y.png");
    REQUIRE(run({}).exit_code == 0);
    CHECK(read_bytes(dir / "in-sobel-y.png") == sobel_y);

    // {kernel} under -k auto names the files once the variant is chosen,
    // and --skip-existing keeps those there by that name.
    std::vector<std::string> by_kernel{"in.png", "-f", "sobel-x", "-f", "sobel-y", "--combine"};
    by_kernel.insert(by_kernel.end(), {"stack", "--depth", "u8", "-o", "{kernel}/{filter}.png",
                                       "--skip-existing", "--json", "-"});
    r = run_cudaconv(by_kernel, dir.path());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    line = nlohmann::json::parse(r.out.substr(0, r.out.find('\n')));
    const std::string variant = line["variant"];
    CHECK(line["outputs"] ==
          nlohmann::json::array({variant + "/sobel-x.png", variant + "/sobel-y.png"}));
    write_file(dir / variant / "sobel-x.png", "kept");
    fs::remove(dir / variant / "sobel-y.png");
    r = run_cudaconv(by_kernel, dir.path());
    REQUIRE(r.exit_code == 0);
    line = nlohmann::json::parse(r.out.substr(0, r.out.find('\n')));
    CHECK(line["outputs"] == nlohmann::json::array({variant + "/sobel-y.png"}));
    CHECK(read_bytes(dir / variant / "sobel-x.png") == "kept");
    CHECK(read_bytes(dir / variant / "sobel-y.png") == sobel_y);
}

namespace {

// The names of the temporary files (.NAME.cudaconv-XXXXXX) left in `folder`.
std::vector<std::string> temp_files_in(const fs::path& folder) {
    std::vector<std::string> left;
    for (const auto& entry : fs::directory_iterator(folder)) {
        const std::string name = entry.path().filename().string();
        if (name.find(".cudaconv-") != std::string::npos) left.push_back(name);
    }
    return left;
}

}  // namespace

TEST_CASE("bank: two filters whose files meet through a linked folder are refused",
          "[cli][bank][stack]") {
    TempDir dir;
    copy_sample("camera-crop.png", dir / "in.png");
    fs::create_directory(dir / "sobel-y");
    fs::create_directory_symlink("sobel-y", dir / "sobel-x");
    const auto r = run_cudaconv({"in.png", "-f", "sobel-x", "-f", "sobel-y", "--combine", "stack",
                                 "--depth", "u8", "-o", "{filter}/out.png", "-k", "cpu-ref"},
                                dir.path());
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("would both write it"));
    CHECK(fs::is_empty(dir / "sobel-y"));
}

TEST_CASE("bank: stack's files a filter replace the existing ones all or none",
          "[cli][bank][stack]") {
    TempDir dir;
    copy_sample("camera-crop.png", dir / "in.png");
    // The second filter's file in the same folder as the first's, or in a
    // folder of its own.
    struct Layout {
        std::string pattern, sobel_x, sobel_y;
    };
    const Layout layout =
        GENERATE(Layout{"{stem}-{filter}.png", "in-sobel-x.png", "in-sobel-y.png"},
                 Layout{"{filter}/{stem}.png", "sobel-x/in.png", "sobel-y/in.png"});
    const std::string& pattern = layout.pattern;
    INFO(pattern);
    const fs::path sobel_x = dir / layout.sobel_x;
    const fs::path sobel_y = dir / layout.sobel_y;
    const std::vector<std::string> args{"in.png",    "-f",    "sobel-x", "-f",         "sobel-y",
                                        "--combine", "stack", "--depth", "u8",         "-o",
                                        pattern,     "-k",    "cpu-ref", "--overwrite"};
    REQUIRE(run_cudaconv(args, dir.path()).exit_code == 0);
    CHECK(temp_files_in(sobel_x.parent_path()).empty());
    CHECK(temp_files_in(sobel_y.parent_path()).empty());
    const std::string old_sobel_x = "sobel-x's earlier file";
    write_file(sobel_x, old_sobel_x);

    // The second file cannot be written (a folder in its place): the input
    // fails, and the first filter's earlier file is still there as it was.
    fs::remove(sobel_y);
    fs::create_directory(sobel_y);
    const auto r = run_cudaconv(args, dir.path());
    INFO(r.err);
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.err, Catch::Contains("is a directory"));
    CHECK(read_bytes(sobel_x) == old_sobel_x);
    CHECK(fs::is_directory(sobel_y));
    CHECK(temp_files_in(sobel_x.parent_path()).empty());
    CHECK(temp_files_in(sobel_y.parent_path()).empty());
}

TEST_CASE("bank: what it cannot mean is refused before any work", "[cli][bank]") {
    TempDir dir;
    copy_sample("chelsea-alpha-crop.png", dir / "in.png");
    struct Refusal {
        std::vector<std::string> args;
        std::string says;
    };
    const std::vector<Refusal> refusals{
        {{"-f", "sobel-x", "-f", "sobel-y", "--combine", "mean"},
         "choose magnitude, max, sum or stack"},
        {{"-f", "sobel-x", "-f", "sobel-y", "--combine", "stack"}, "PNG holds 8- or 16-bit"},
        {{"-f", "sobel-x", "-f", "sobel-y", "--combine", "stack", "--depth", "u16"},
         "which only .npy holds; name the output .npy, or put {filter} in -o"},
        {{"-f", "sobel-x", "-f", "sobel-y", "--combine", "stack", "-o", "{filter}.png"},
         "sobel-x.png: PNG holds 8- or 16-bit"},
        {{"-f", "sobel-x", "-f", "sobel-y", "--combine", "stack", "--depth", "u16", "-o",
          "{filter}.jpg"},
         "sobel-x.jpg: JPEG holds 8-bit samples"},
        {{"-f", "sobel-x", "-f", "sobel-y", "-f", "sobel-x", "--combine", "stack", "--depth", "u8",
          "-o", "{filter}.png"},
         "sobel-x.png: filter 1 of the bank (sobel-x) and filter 3 of the bank (sobel-x) would "
         "both write it"},
        {{"-f", "sobel-x", "-f", "box:5", "--combine", "max", "--border", "valid"},
         "responses of different sizes"},
        {{"-f", "sobel-x", "-f", "sobel-y", "--combine", "sum", "--alpha", "premultiply"},
         "--alpha premultiply"},
        {{"-f", "sobel-x", "-f", "sobel-y", "--combine", "sum", "--anchor", "0,0"},
         "filters of a bank are each centred"},
        {{"-f", "none", "--combine", "sum"}, "--combine"},
        {{"-f", "none", "-f", "edge", "--combine", "sum"}, "cannot be a step"},
    };
    for (const Refusal& refusal : refusals) {
        std::vector<std::string> args{"in.png"};
        if (std::find(refusal.args.begin(), refusal.args.end(), "-o") == refusal.args.end()) {
            args.insert(args.end(), {"-o", "out.png"});
        }
        args.insert(args.end(), refusal.args.begin(), refusal.args.end());
        const auto r = run_cudaconv(args, dir.path());
        INFO(r.err);
        CHECK(r.exit_code == 2);
        CHECK(r.err.find(refusal.says) != std::string::npos);
        CHECK(dir.entries() == std::vector<std::string>{"in.png"});
    }
}

TEST_CASE("bank: on the GPU, equal to cpu-ref", "[cli][bank][gpu]") {
    if (skip_without_device()) return;
    TempDir dir;
    copy_sample("chelsea-alpha-crop.png", dir / "in.png");
    const std::vector<std::string> bank{"in.png",    "-f",         "sobel-x",   "-f",
                                        "sobel-y",   "-f",         "laplacian", "--combine",
                                        "magnitude", "--overwrite"};
    auto on_cpu = bank;
    on_cpu.insert(on_cpu.end(), {"-k", "cpu-ref", "-o", "cpu.png"});
    REQUIRE(run_cudaconv(on_cpu, dir.path()).exit_code == 0);
    for (const char* variant : {"fast", "smem", "naive", "fft"}) {
        INFO(variant);
        auto on_gpu = bank;
        on_gpu.insert(on_gpu.end(), {"-k", variant, "-o", "gpu.png"});
        const auto r = run_cudaconv(on_gpu, dir.path());
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        CHECK(cv::norm(read(dir / "gpu.png"), read(dir / "cpu.png"), cv::NORM_INF) <= 1.0);
    }
}

}  // namespace cudaconv::test
