// Bad input, as a user meets it: one clear line on stderr naming the file
// and the problem, docs/SPEC.md's exit code, and no output file left behind.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

#include <opencv2/imgcodecs.hpp>

#include "support/files.hpp"
#include "support/run_command.hpp"

namespace cudaconv::test {
namespace fs = std::filesystem;

namespace {

struct BadCase {
    const char* what;
    std::vector<std::string> args;  // "{dir}" is the temporary folder
    int exit_code;
    std::vector<std::string> message_parts;
};

}  // namespace

TEST_CASE("bad inputs, filters and outputs give one line, an exit code and no output",
          "[cli][errors]") {
    TempDir dir;
    // Inputs that are not images, made in the folder.
    write_file(dir / "empty.png", "");
    write_file(dir / "text.png", "this is not an image\n");
    const std::string jpeg = read_bytes(sample("rocket.jpg"));
    write_file(dir / "truncated.jpg", jpeg.substr(0, jpeg.size() / 2));
    std::string corrupt = read_bytes(sample("camera.png"));
    for (std::size_t i = 100; i < corrupt.size(); i += 97)
        corrupt[i] = static_cast<char>(~corrupt[i]);
    write_file(dir / "corrupt.png", corrupt);
    const std::string png = read_bytes(sample("camera.png"));
    write_file(dir / "truncated.png", png.substr(0, png.size() / 3));
    write_file(dir / "ragged.txt", "1 2 3\n4 5\n");
    write_file(dir / "nan.txt", "1 nan\n");
    fs::create_directory(dir / "folder");
    const std::string cam = sample("camera.png");

    std::vector<BadCase> cases{
        {"missing input", {"nope.png", "-f", "edge", "-o", "o.png"}, 1, {"nope.png", "no such"}},
        {"empty input", {"empty.png", "-f", "edge", "-o", "o.png"}, 1, {"empty.png", "empty"}},
        {"not an image", {"text.png", "-f", "edge", "-o", "o.png"}, 1, {"text.png"}},
        {"truncated JPEG", {"truncated.jpg", "-f", "edge", "-o", "o.png"}, 1, {"truncated.jpg"}},
        {"truncated PNG", {"truncated.png", "-f", "edge", "-o", "o.png"}, 1, {"truncated.png"}},
        {"corrupt PNG", {"corrupt.png", "-f", "edge", "-o", "o.png"}, 1, {"corrupt.png"}},
        {"folder without images",
         {"folder", "-f", "edge", "-o", "o.png"},
         2,
         {"folder", "no image"}},
        {"unknown filter", {cam, "-f", "edgy", "-o", "o.png"}, 2, {"edgy"}},
        {"malformed inline", {cam, "-f", "3x3:1,2", "-o", "o.png"}, 2, {"3x3:1,2"}},
        {"ragged filter file", {cam, "-f", "ragged.txt", "-o", "o.png"}, 2, {"ragged.txt:2"}},
        {"NaN in filter file", {cam, "-f", "nan.txt", "-o", "o.png"}, 2, {"nan.txt:1"}},
        {"missing @file", {cam, "-f", "@none.txt", "-o", "o.png"}, 2, {"none.txt"}},
        {"absurd filter", {cam, "-f", "99999x99999:1", "-o", "o.png"}, 2, {"99999"}},
        {"unknown variant",
         {cam, "-f", "edge", "-k", "warp", "-o", "o.png"},
         2,
         {"warp", "cpu-ref"}},
        {"unknown extension", {cam, "-f", "edge", "-o", "o.xyz"}, 2, {"o.xyz"}},
        {"no extension", {cam, "-f", "edge", "-o", "o"}, 2, {"o:", "no extension"}},
        {"float to PNG", {cam, "-f", "edge", "--depth", "f32", "-o", "o.png"}, 2, {"o.png", "f32"}},
        {"float to JPEG",
         {sample("camera-crop-f32.pfm"), "-f", "edge", "-o", "o.jpg"},
         1,
         {"o.jpg"}},
        {"missing output folder",
         {cam, "-f", "edge", "-o", "no/such/o.png"},
         1,
         {"no/such/o.png", "the folder no/such does not exist"}},
        {"output folder a file",
         {cam, "-f", "edge", "-o", "in.png/o.png"},
         1,
         {"in.png/o.png", "in.png is a file, not a folder"}},
        {"output is the input", {"in.png", "-f", "edge", "-o", "in.png"}, 2, {"in.png", "input"}},
        {"bad border", {cam, "-f", "edge", "--border", "mirror2", "-o", "o.png"}, 2, {"mirror2"}},
        {"anchor outside", {cam, "-f", "edge", "--anchor", "3,0", "-o", "o.png"}, 2, {"--anchor"}},
        {"valid, filter too big",
         {sample("camera-16bit.png"), "-f", "box:301", "--border", "valid", "-o", "o.png"},
         1,
         {"valid"}},
        {"zero repeats", {cam, "-f", "edge", "--repeat", "0", "-o", "o.png"}, 2, {"--repeat"}},
        {"no filter", {cam, "-o", "o.png"}, 2, {"--filter"}},
        {"no output", {cam, "-f", "edge"}, 2, {"--output"}},
        {"unknown option", {cam, "-f", "edge", "-o", "o.png", "--sharpness"}, 2, {"--sharpness"}},
        {"one file, two inputs",
         {cam, sample("rocket.jpg"), "-f", "edge", "-o", "o.png"},
         2,
         {"o.png"}},
        {"stdout, two inputs", {cam, sample("rocket.jpg"), "-f", "edge", "-o", "-"}, 2, {"-o -"}},
        {"--encoder gpu, CPU variant",
         {cam, "-f", "edge", "-k", "cpu", "--encoder", "gpu", "-o", "o.png"},
         2,
         {"--encoder gpu: -k cpu filters on the CPU"}},
        {"unknown JPEG sampling",
         {cam, "-f", "edge", "--jpeg-sampling", "411", "-o", "o.jpg"},
         2,
         {"--jpeg-sampling: 411 not in {420,422,444}"}},
        {"--encoder gpu, PNG level 6",
         {cam, "-f", "edge", "--encoder", "gpu", "--png-level", "6", "-o", "o.png"},
         2,
         {"--encoder gpu: the GPU writes PNG at --png-level 1 only, not 6"}},
        {"--encoder gpu, no filter",
         {cam, "-f", "none", "--encoder", "gpu", "-o", "o.png"},
         2,
         {"--encoder gpu: -f none runs nothing on the GPU"}},
        {"unknown encoder",
         {cam, "-f", "edge", "--encoder", "nvjpeg", "-o", "o.png"},
         2,
         {"--encoder", "nvjpeg"}},
        {"negative pinned slots",
         {cam, "-f", "edge", "--pinned-slots", "-1", "-o", "o.png"},
         2,
         {"--pinned-slots", "-1"}},
        {"pinned slots not a number",
         {cam, "-f", "edge", "--pinned-slots", "three", "-o", "o.png"},
         2,
         {"--pinned-slots", "three"}},
        {"too many pinned slots",
         {cam, "-f", "edge", "--pinned-slots", "70000", "-o", "o.png"},
         2,
         {"--pinned-slots", "70000"}},
        {"three GPU threads a device",
         {cam, "-f", "edge", "--gpu-threads", "3", "-o", "o.png"},
         2,
         {"--gpu-threads: 3 is not from 1 to 2"}},
        {"no GPU threads",
         {cam, "-f", "edge", "--gpu-threads", "0", "-o", "o.png"},
         2,
         {"--gpu-threads: 0 is not from 1 to 2"}},
        // CLI11's own errors, in our words: the option as typed, and the one
        // most likely meant (CLI11 said "-uality was not expected").
        {"ImageMagick's -quality",
         {cam, "-f", "edge", "-quality", "50", "-o", "o.jpg"},
         2,
         {"unknown option -quality (did you mean --jpeg-quality?)"}},
        {"a typo of a long option",
         {cam, "-f", "edge", "--jpeg-qualty", "50", "-o", "o.jpg"},
         2,
         {"unknown option --jpeg-qualty (did you mean --jpeg-quality?)"}},
        {"a typo of a part of a long option",
         {cam, "-f", "edge", "--qualty=50", "-o", "o.jpg"},
         2,
         {"unknown option --qualty", "(did you mean --jpeg-quality?)"}},
        {"an option like none",
         {cam, "-f", "edge", "--frobnicate", "-o", "o.png"},
         2,
         {"unknown option --frobnicate (see --help)"}},
        {"the output written as an input",
         {cam, "out.png", "-f", "edge"},
         2,
         {"--output is required (out.png is not a file: did you mean -o out.png?)"}},
        // list's, where CLI11 said "what is required" and "what: bogus not in
        // {filters,kernels,devices}".
        {"list with an unknown option", {"list", "--frob"}, 2, {"unknown option --frob"}},
        {"an unknown list",
         {"list", "bogus"},
         2,
         {"unknown list \"bogus\"; cudaconv list filters, kernels or devices"}},
        {"a typo of a list", {"list", "filtres"}, 2, {"(did you mean \"filters\"?)"}},
        {"two lists", {"list", "filters", "kernels"}, 2, {"unexpected argument \"kernels\""}},
        {"a stray value",
         {"compare", "a.png", "b.png", "c.png"},
         2,
         {"unexpected argument \"c.png\""}},
    };
    // The GPU machine's static OpenCV writes no TIFF: there the format is
    // refused first.
    if (cv::haveImageWriter("x.tif")) {
        cases.push_back({"--encoder gpu, TIFF",
                         {cam, "-f", "edge", "--encoder", "gpu", "-o", "o.tif"},
                         2,
                         {"--encoder gpu: o.tif: the GPU encodes PNG and JPEG only"}});
    }
    fs::copy_file(cam, dir / "in.png");

    for (const BadCase& c : cases) {
        SECTION(c.what) {
            const auto before = dir.entries();
            const auto r = run_cudaconv(c.args, dir.path());
            INFO("stderr: " << r.err);
            CHECK(r.exit_code == c.exit_code);
            for (const std::string& part : c.message_parts)
                CHECK_THAT(r.err, Catch::Contains(part));
            CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);  // one line
            CHECK(r.err.find("error") != std::string::npos);
            CHECK(dir.entries() == before);  // no output, no temporary file
            CHECK(read_bytes(dir / "in.png") == read_bytes(cam));
        }
    }
}

// Every numeric option of every command: a value out of its range, not a
// number, or NaN or infinity where a number is compared or counted, is one
// short line naming the option and the value, exit 2. CLI11's own checks
// printed DBL_MAX's 309 digits ("--repeat: Value 0 not in range 0.000000
// to 1797...") and let NaN through ("--max-abs nan" was a limit nothing
// met: exit 1).
TEST_CASE("numeric options refuse NaN and values out of range in one short line", "[cli][errors]") {
    TempDir dir;
    const std::string cam = sample("camera.png");
    auto filter = [&cam](std::vector<std::string> more) {
        std::vector<std::string> args{cam, "-f", "edge", "-k", "cpu", "-o", "o.png"};
        args.insert(args.end(), more.begin(), more.end());
        return args;
    };
    auto bench = [](std::vector<std::string> more) {
        std::vector<std::string> args{"bench", "--size", "10x10", "-f", "edge", "-k", "cpu"};
        args.insert(args.end(), more.begin(), more.end());
        return args;
    };
    auto compare = [&cam](std::vector<std::string> more) {
        std::vector<std::string> args{"compare", cam, cam};
        args.insert(args.end(), more.begin(), more.end());
        return args;
    };
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
        {filter({"--repeat", "0"}), "--repeat: 0 is not from 1 to 1000000"},
        {filter({"--repeat", "nan"}), "--repeat: \"nan\" is not an integer"},
        {filter({"--warmup", "-1"}), "--warmup: -1 is not from 0 to 1000000"},
        {filter({"-j", "0"}), "--jobs: 0 is not from 1 to 1024"},
        {filter({"-j", "nan"}), "--jobs: \"nan\" is not an integer"},
        {filter({"--in-flight", "inf"}), "--in-flight: \"inf\" is not an integer"},
        {filter({"--jpeg-quality", "101"}), "--jpeg-quality: 101 is not from 0 to 100"},
        {filter({"--png-level", "-1"}), "--png-level: -1 is not from 0 to 9"},
        {filter({"--pinned-slots", "nan"}), "--pinned-slots: \"nan\" is not an integer"},
        {filter({"--max-pixels", "-1"}), "--max-pixels: -1 is negative"},
        {filter({"--max-pixels", "nan"}), "--max-pixels: \"nan\" is not an integer"},
        {filter({"--scale", "nan"}), "--scale must be a finite number"},
        {filter({"--delta", "-inf"}), "--delta must be a finite number"},
        {filter({"--border", "constant", "--border-value", "nan"}),
         "--border-value must be a finite number"},
        {bench({"--repeat", "0"}), "--repeat: 0 is not a positive number"},
        {bench({"--repeat", "nan"}), "--repeat: \"nan\" is not an integer"},
        {bench({"--warmup", "-1"}), "--warmup: -1 is negative"},
        {compare({"--max-abs", "nan"}),
         "--max-abs: \"nan\" is not a finite number (NaN and Inf are not allowed)"},
        {compare({"--max-abs", "-1"}), "--max-abs: -1 is negative"},
        {compare({"--max-abs", "inf"}), "--max-abs: \"inf\" is not a finite number"},
        {compare({"--max-rel", "NaN"}), "--max-rel: \"NaN\" is not a finite number"},
        {compare({"--max-rel", "-0.5"}), "--max-rel: -0.5 is negative"},
        {compare({"--min-psnr", "nan"}), "--min-psnr: \"nan\" is not a finite number"},
        {compare({"--min-psnr", "-inf"}), "--min-psnr: \"-inf\" is not a finite number"},
        {compare({"--pixel-threshold", "nan"}),
         "--pixel-threshold: \"nan\" is not a finite number"},
        {compare({"--pixel-threshold", "-1"}), "--pixel-threshold: -1 is negative"},
        {compare({"--max-differing", "nan"}), "--max-differing nan: expected a pixel count"},
        {compare({"--max-pixels", "-1"}), "--max-pixels: -1 is negative"},
    };
    for (const auto& [args, message] : cases) {
        const auto r = run_cudaconv(args, dir.path());
        INFO(args[args.size() - 2] << " " << args.back() << ": " << r.err);
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::StartsWith("cudaconv: error: ") && Catch::Contains(message));
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK(r.err.size() < 160);
        CHECK(r.out.empty());
    }
    CHECK(dir.entries().empty());
}

TEST_CASE("a failing input among several leaves the others written and exits 1", "[cli][errors]") {
    TempDir dir;
    write_file(dir / "bad.png", "garbage");
    const auto r = run_cudaconv(
        {sample("camera.png"), "bad.png", sample("rocket.jpg"), "-f", "edge", "-o", "out/"},
        dir.path());
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.err, Catch::Contains("bad.png"));
    CHECK(fs::exists(dir / "out" / "camera.png"));
    CHECK(fs::exists(dir / "out" / "rocket.jpg"));
    CHECK_FALSE(fs::exists(dir / "out" / "bad.png"));
}

TEST_CASE("an existing output is replaced whole, atomically, with --overwrite", "[cli][errors]") {
    TempDir dir;
    write_file(dir / "o.png", "old");
    // Without --overwrite it is a configuration error before any work ...
    auto r = run_cudaconv({sample("camera.png"), "-f", "edge", "-o", "o.png"}, dir.path());
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("o.png") && Catch::Contains("--overwrite"));
    CHECK(read_bytes(dir / "o.png") == "old");
    // ... a failing run leaves the old file as it was ...
    r = run_cudaconv({"missing.png", "-f", "edge", "--overwrite", "-o", "o.png"}, dir.path());
    CHECK(r.exit_code == 1);
    CHECK(read_bytes(dir / "o.png") == "old");
    // ... a successful one replaces it.
    r = run_cudaconv({sample("camera.png"), "-f", "edge", "--overwrite", "-o", "o.png"},
                     dir.path());
    CHECK(r.exit_code == 0);
    CHECK(read_bytes(dir / "o.png") != "old");
    CHECK(dir.entries() == std::vector<std::string>{"o.png"});
}

}  // namespace cudaconv::test
