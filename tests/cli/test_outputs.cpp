// Every file cudaconv writes is an output, checked before any work:
// template outputs and their root.
#include <catch2/catch.hpp>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include "support/files.hpp"
#include "support/run_command.hpp"

namespace cudaconv::test {
namespace fs = std::filesystem;

namespace {

void copy_sample(const std::string& name, const fs::path& to) {
    fs::create_directories(to.parent_path());
    fs::copy_file(sample(name), to, fs::copy_options::overwrite_existing);
}

bool decodes(const fs::path& p) { return !cv::imread(p.string(), cv::IMREAD_UNCHANGED).empty(); }

std::size_t count(const std::string& text, const std::string& part) {
    std::size_t n = 0;
    for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
    return n;
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

TEST_CASE("templates: a {dir} or {stem} holding .. is refused; a literal .. is the user's",
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

TEST_CASE("outputs: -o NAME/ where NAME is a file says so", "[cli][outputs]") {
    TempDir dir;
    copy_sample("camera.png", dir / "a.png");
    const auto r = run_cudaconv({"a.png", "-f", "edge", "-o", "a.png/"}, dir.path());
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.err, Catch::Contains("a.png/a.png: cannot write: a.png is a file, not a folder"));
    CHECK(count(r.err, "\n") == 1);
    CHECK(dir.entries() == std::vector<std::string>{"a.png"});
}

}  // namespace cudaconv::test
