// Text a user (or an attacker) controls, as the binary meets it: filter
// files and lists of any length read in little memory, taps that would
// overflow float32 refused, and specs and paths echoed without terminal
// codes, on one line.
#include <catch2/catch.hpp>

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

}  // namespace cudaconv::test
