// The folders a run makes for its outputs, and their removal where nothing
// went into them (io/made_folders.hpp).
#include <catch2/catch.hpp>

#include <filesystem>
#include <system_error>

#include "io/made_folders.hpp"
#include "support/temp_folder.hpp"

namespace cudaconv::test {
namespace fs = std::filesystem;

TEST_CASE("made folders that stay empty are removed, innermost first, others stay", "[batch]") {
    TempFolder dir;
    fs::create_directory(dir.path() / "existing");
    std::error_code ec;
    // a/b/c and a/b/d made; a/b/c gets a file; existing/e made and left empty.
    make_folders((dir.path() / "a" / "b" / "c").string(), ec);
    REQUIRE_FALSE(ec);
    make_folders((dir.path() / "a" / "b" / "d" / "").string(), ec);  // a trailing '/'
    REQUIRE_FALSE(ec);
    make_folders((dir.path() / "existing" / "e").string(), ec);
    REQUIRE_FALSE(ec);
    make_folders((dir.path() / "existing").string(), ec);  // there already: nothing noted
    REQUIRE_FALSE(ec);
    REQUIRE(fs::is_directory(dir.path() / "a" / "b" / "d"));
    dir.write("a/b/c/out.png", "x");

    remove_empty_made_folders();
    CHECK(fs::exists(dir.path() / "a" / "b" / "c" / "out.png"));
    CHECK_FALSE(fs::exists(dir.path() / "a" / "b" / "d"));
    CHECK_FALSE(fs::exists(dir.path() / "existing" / "e"));
    CHECK(fs::is_directory(dir.path() / "existing"));  // not made by the run

    // Every level made and none written: all of it goes.
    make_folders((dir.path() / "x" / "y" / "z").string(), ec);
    REQUIRE_FALSE(ec);
    remove_empty_made_folders();
    CHECK_FALSE(fs::exists(dir.path() / "x"));

    // A file where a folder should be: the error, nothing noted.
    dir.write("file", "x");
    make_folders((dir.path() / "file" / "sub").string(), ec);
    CHECK(ec);
    remove_empty_made_folders();
    CHECK(fs::is_regular_file(dir.path() / "file"));
}

}  // namespace cudaconv::test
