// Text a user (or an attacker) controls, as the binary meets it: filter
// files and lists of any length read in little memory, taps that would
// overflow float32 refused, and specs and paths echoed without terminal
// codes, on one line.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "support/files.hpp"
#include "support/run_command.hpp"

namespace cudaconv::test {
namespace fs = std::filesystem;

namespace {

// Far above the binary's own 60-odd MB (OpenCV and the CUDA runtime
// loaded), far below what holding a 50 MB file's lines or a stream's
// bytes takes.
constexpr long kSmallPeakKb = 100 * 1024;

int lines_in(const std::string& text) {
    return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

// C0 controls other than the line's end, DEL, and a C1 control in UTF-8.
bool has_terminal_codes(const std::string& text) {
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto b = static_cast<unsigned char>(text[i]);
        if ((b < 0x20 && b != '\n') || b == 0x7f) return true;
        if (b == 0xc2 && i + 1 < text.size()) {
            const auto next = static_cast<unsigned char>(text[i + 1]);
            if (next >= 0x80 && next < 0xa0) return true;
        }
    }
    return false;
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
    for (const auto& [file, message] : cases) {
        const auto r = run_cudaconv(
            {sample("camera.png"), "-f", file, "-k", "cpu", "-o", "o.png"}, dir.path());
        INFO(file << ": " << r.err << "peak " << r.peak_rss_kb << " KB");
        CHECK(r.exit_code == 2);
        CHECK(r.err == message);
        CHECK(r.peak_rss_kb < kSmallPeakKb);
        CHECK_FALSE(fs::exists(dir / "o.png"));
    }
}

TEST_CASE("specs and paths are echoed escaped, on one line", "[cli][limits]") {
    TempDir dir;
    const std::string cam = sample("camera.png");
    const std::vector<std::vector<std::string>> cases{
        {cam, "-f", "edgy\x1b[2J\x1b[31m\r\ncudaconv: info: all done\x07", "-o", "o.png"},
        {cam, "-f", "3x3:1,\x1b]0;pwned\x07,3", "-o", "o.png"},
        {cam, "-f", "@\x1b[31mk\n.txt", "-o", "o.png"},
        {cam, "-f", "gaussian:5:\xc2\x9b" "2J", "-o", "o.png"},
        {cam, "-f", "edge", "--border", "\x1b[5mblink", "-o", "o.png"},
    };
    for (const auto& args : cases) {
        const auto r = run_cudaconv(args, dir.path());
        INFO(r.err);
        CHECK(r.exit_code != 0);
        CHECK(lines_in(r.err) == 1);
        CHECK_THAT(r.err, Catch::StartsWith("cudaconv: error: "));
        CHECK_FALSE(has_terminal_codes(r.err));
        CHECK_THAT(r.err, Catch::Contains("\\x1b") || Catch::Contains("\\xc2\\x9b"));
        CHECK(dir.entries().empty());
    }
}

TEST_CASE("a 300-character unknown spec is echoed shortened", "[cli][limits]") {
    TempDir dir;
    const std::string spec(300, 'q');
    const auto r = run_cudaconv({sample("camera.png"), "-f", spec, "-o", "o.png"}, dir.path());
    CHECK(r.exit_code == 2);
    CHECK(r.err == "cudaconv: error: unknown filter \"" + std::string(80, 'q') +
                       "...\"; run 'cudaconv list filters'\n");
}

}  // namespace cudaconv::test
