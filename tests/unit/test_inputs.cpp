// io/inputs.hpp's bounds: a --from list read a line at a time, and the
// most paths and images one batch takes (kMaxInputFiles, lowered here so
// that the tests need not make ten million files).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "io/inputs.hpp"
#include "base/errors.hpp"
#include "support/temp_folder.hpp"

namespace cudaconv {
namespace {
namespace fs = std::filesystem;

std::string error_of(const InputRequest& request) {
    try {
        expand_inputs(request);
    } catch (const UsageError& e) {
        return e.what();
    }
    return "no error";
}

}  // namespace

TEST_CASE("a --from list, a folder and a batch hold at most max_files", "[inputs]") {
    const test::TempFolder dir("cudaconv-inputs-");
    InputRequest request;
    request.max_files = 3;
    // Blank lines are not paths; the fourth path is one too many.
    request.from = dir.write("list.txt", "a.png\n\nb.png\r\nc.png\nd.png\n");
    CHECK(error_of(request) ==
          "--from " + request.from + ":5: a list of more than 3 paths (the most one batch takes)");
    request.from = dir.write("three.txt", "a.png\n\nb.png\r\nc.png\n");
    CHECK(expand_inputs(request).size() == 3u);

    for (const char* name : {"f/1.png", "f/2.png", "f/3.png", "f/4.png"}) dir.write(name, "x");
    const std::string folder = fs::path(dir.write("f/5.txt", "not an image")).parent_path();
    request.from.clear();
    request.args = {folder};
    CHECK(error_of(request) == folder + ": more than 3 image files (the most one batch takes)");

    request.max_files = 4;
    request.from = dir.write("one.txt", "other.png\n");
    CHECK(error_of(request) == "more than 4 input images (the most one batch takes)");
    request.max_files = 5;
    CHECK(expand_inputs(request).size() == 5u);
}

TEST_CASE("a --from list keeps its paths' bytes and names its bad lines", "[inputs]") {
    const test::TempFolder dir("cudaconv-inputs-");
    InputRequest request;
    // Any byte but NUL may be in a path: spaces, '*', a lone \r, invalid UTF-8.
    request.from = dir.write("odd.txt", "a b.png\nstar*.png\ncr\r.png\n\xff.png\r\n");
    const std::vector<InputFile> files = expand_inputs(request);
    REQUIRE(files.size() == 4u);
    CHECK(files[0].path == "a b.png");
    CHECK(files[1].path == "star*.png");
    CHECK(files[2].path == "cr\r.png");
    CHECK(files[3].path == "\xff.png");

    request.from = dir.write("nul\x1b.txt", std::string("a.png\nb\0.png\n", 13));
    CHECK(error_of(request) == "--from " + fs::path(request.from).parent_path().string() +
                                   "/nul\\x1b.txt:2: not a list of paths (a NUL byte)");
    request.from = dir.write("long.txt", "a.png\n" + std::string(4097, 'p') + "\n");
    CHECK(error_of(request) ==
          "--from " + request.from + ":2: not a list of paths (a line longer than 4096 bytes)");
    request.from = dir.write("longest.txt", std::string(4096, 'p') + "\n");
    CHECK(expand_inputs(request).size() == 1u);
}

}  // namespace cudaconv
