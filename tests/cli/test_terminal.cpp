// What cudaconv does where stdout or stderr is a terminal: colours, the
// progress line, image data. `script` (util-linux) runs it on a
// pseudo-terminal and copies what the terminal showed to its own stdout.
#include <catch2/catch.hpp>

#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include "support/files.hpp"
#include "support/run_command.hpp"

namespace cudaconv::test {
namespace {

using Environment = std::vector<std::pair<std::string, std::string>>;

// `cudaconv args` with stdin, stdout and stderr on one pseudo-terminal; the
// result's `out` is everything the terminal showed.
CommandResult on_terminal(const std::string& args, const TempDir& dir,
                          const Environment& env = {}) {
    return run_program({"script", "-qfec", cudaconv_binary() + " " + args, "/dev/null"}, dir.path(),
                       {}, env);
}

// An SGR sequence (ESC [ ... m): a colour or an attribute.
bool has_colour(const std::string& text) {
    static const std::regex kSgr("\033\\[[0-9;]*m");
    return std::regex_search(text, kSgr);
}

}  // namespace

// no-color.org: NO_COLOR set to anything but "" turns every colour off.
// The warning is a run that succeeds and still logs a line.
TEST_CASE("terminal: the level names are coloured, unless NO_COLOR is set", "[cli][terminal]") {
    TempDir dir;
    const std::string args =
        sample("camera.png") + " -f edge --border-value 3 -o o.png --overwrite";
    const auto coloured = on_terminal(args, dir, {{"NO_COLOR", ""}});  // "" counts as unset
    INFO(coloured.out);
    REQUIRE(coloured.exit_code == 0);
    CHECK_THAT(coloured.out, Catch::Contains("warning") && Catch::Contains("--border-value 3"));
    CHECK(has_colour(coloured.out));

    const auto plain = on_terminal(args, dir, {{"NO_COLOR", "1"}});
    INFO(plain.out);
    REQUIRE(plain.exit_code == 0);
    CHECK_THAT(plain.out, Catch::StartsWith("cudaconv: warning: --border-value 3"));
    CHECK_FALSE(has_colour(plain.out));
}

// The progress line moves the cursor (\r, erase to the end of the line)
// but has no colour to turn off.
TEST_CASE("terminal: the progress line has no colour", "[cli][terminal]") {
    TempDir dir;
    for (int i = 0; i < 3; ++i)
        copy_sample("camera.png", dir / "in" / ("c" + std::to_string(i) + ".png"));
    const auto r = on_terminal("in -f edge -k cpu -j 1 -o out/", dir, {{"NO_COLOR", ""}});
    INFO(r.out);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("3/3  100%"));
    CHECK_FALSE(has_colour(r.out));
}

// As gzip: image data is not written to a terminal. The refusal comes
// before any work: the input, which is not an image, is never read.
TEST_CASE("terminal: -o - is refused on a terminal, before any work", "[cli][terminal]") {
    TempDir dir;
    write_file(dir / "broken.png", "not an image");
    const auto r = on_terminal("broken.png -f edge -o -", dir, {{"NO_COLOR", "1"}});
    INFO(r.out);
    CHECK(r.exit_code == 2);
    CHECK(r.out ==
          "cudaconv: error: -o -: refusing to write image data to a terminal (redirect stdout, "
          "or give -o FILE)\r\n");
}

// Redirected, -o - writes the image, whether stderr is a terminal (a user
// at the prompt: `cudaconv a.png -f edge -o - > b.png`) or not (a pipe).
TEST_CASE("terminal: -o - redirected away from the terminal writes the image", "[cli][terminal]") {
    TempDir dir;
    const std::string cam = sample("camera.png");
    const auto redirected = on_terminal(cam + " -f edge -o - > edge.png", dir);
    INFO(redirected.out);
    CHECK(redirected.exit_code == 0);
    CHECK(redirected.out.empty());
    CHECK(cv::imread((dir / "edge.png").string(), cv::IMREAD_UNCHANGED).size() ==
          cv::Size(512, 512));

    const auto piped = run_cudaconv({cam, "-f", "edge", "-o", "-"}, dir.path());
    INFO(piped.err);
    CHECK(piped.exit_code == 0);
    CHECK(piped.out == read_bytes(dir / "edge.png"));
}

// --json - on a terminal: the JSON lines alone, no progress line redrawn
// among them; with the JSON in a file, the progress line is drawn.
TEST_CASE("terminal: no progress line beside --json - on the terminal", "[cli][terminal]") {
    TempDir dir;
    for (int i = 0; i < 3; ++i)
        copy_sample("camera.png", dir / "in" / ("c" + std::to_string(i) + ".png"));
    const auto json = on_terminal("in -f edge -k cpu -j 1 -o out/ --json -", dir);
    INFO(json.out);
    REQUIRE(json.exit_code == 0);
    CHECK_THAT(json.out, Catch::Contains("\"summary\":true"));
    CHECK_THAT(json.out, !Catch::Contains("images/s") && !Catch::Contains("\033[K"));

    const auto file = on_terminal("in -f edge -k cpu -j 1 -o out/ --json t.json --overwrite", dir);
    INFO(file.out);
    REQUIRE(file.exit_code == 0);
    CHECK_THAT(file.out, Catch::Contains("3/3  100%") && Catch::Contains("\033[K"));
}

}  // namespace cudaconv::test

namespace cudaconv::test {

// Every command's --help on an 80-column terminal: descriptions wrapped
// under their column, nothing cut (each option still named).
TEST_CASE("terminal: --help keeps to 80 columns", "[cli][terminal]") {
    const std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> helps{
        {{"--help"}, {"--shard K/N", "--in-flight", "--jpeg-sampling", "--json"}},
        {{"list", "--help"}, {"what"}},
        {{"compare", "--help"}, {"--max-abs", "--diff"}},
        {{"bench", "--help"}, {"--csv"}},
    };
    for (const auto& [args, names] : helps) {
        INFO(args.front());
        const auto r = run_cudaconv(args);
        REQUIRE(r.exit_code == 0);
        std::istringstream lines(r.out);
        int count = 0;
        for (std::string line; std::getline(lines, line); ++count) {
            INFO(line);
            CHECK(line.size() <= 80);
        }
        CHECK(count > 10);
        for (const std::string& name : names) CHECK_THAT(r.out, Catch::Contains(name));
    }
}

}  // namespace cudaconv::test
