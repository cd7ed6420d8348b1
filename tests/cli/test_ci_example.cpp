// docs/CI.md's worked example, run as written: docs/examples/golden-gate.sh
// makes goldens with UPDATE=1, passes against them, and fails (exit 1, heat
// maps written) when the filtering changes or a golden has no output.
#include <catch2/catch.hpp>

#include <filesystem>

#include "support/run_command.hpp"

namespace cudaconv::test {
namespace fs = std::filesystem;

TEST_CASE("the CI example script gates on cudaconv compare", "[cli][compare][docs]") {
    TempDir dir;
    fs::create_directories(dir / "photos");
    for (const char* name : {"camera-crop.png", "chelsea-alpha-crop.png", "camera16-crop.png"}) {
        fs::copy_file(source_dir() / "images" / name, dir / "photos" / name);
    }
    const std::string script = (source_dir() / "docs" / "examples" / "golden-gate.sh").string();
    const std::pair<std::string, std::string> binary{"CUDACONV", cudaconv_binary()};
    auto gate = [&](std::vector<std::string> extra, bool update) {
        std::vector<std::string> command{"bash", script, "photos", "golden", "out", "-f", "edge"};
        command.insert(command.end(), extra.begin(), extra.end());
        return run_program(command, dir.path(), {}, {binary, {"UPDATE", update ? "1" : "0"}});
    };

    const auto made = gate({}, true);
    INFO(made.out << made.err);
    REQUIRE(made.exit_code == 0);
    CHECK(fs::exists(dir / "golden" / "chelsea-alpha-crop.png"));

    const auto same = gate({}, false);
    INFO(same.out << same.err);
    CHECK(same.exit_code == 0);
    CHECK_THAT(same.out, Catch::Contains("ok: 3 compared, 3 ok"));

    const auto changed = gate({"--border", "wrap"}, false);
    INFO(changed.out << changed.err);
    CHECK(changed.exit_code == 1);
    CHECK_THAT(changed.out, Catch::Contains("3 outside limits"));
    CHECK(fs::exists(dir / "out.diff" / "camera-crop.png"));

    // A golden without an output: reported missing, and the gate fails.
    fs::copy_file(dir / "golden" / "camera-crop.png", dir / "golden" / "gone.png");
    const auto missing = gate({}, false);
    CHECK(missing.exit_code == 1);
    CHECK_THAT(missing.out, Catch::Contains("missing gone.png"));
}

}  // namespace cudaconv::test
