// --shard K/N as scripts and job arrays use it: N runs over one folder do
// every input once, their outputs are a single run's, a rerun with
// --skip-existing resumes, and bad values stop before any work.
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/files.hpp"
#include "support/json_lines.hpp"
#include "support/run_command.hpp"

namespace cudaconv::test {
namespace fs = std::filesystem;

namespace {

// 12 inputs in a tree: in/{,a/,a/b/}N-SAMPLE.
std::vector<std::string> make_tree(const TempDir& dir) {
    std::vector<std::string> inputs;
    int i = 0;
    for (const char* sample :
         {"camera-crop.png", "chelsea-crop.png", "camera16-crop.png", "chelsea-alpha-crop.png"}) {
        for (const char* sub : {"", "a/", "a/b/"}) {
            const std::string path = std::string("in/") + sub + std::to_string(i++) + "-" + sample;
            copy_sample(sample, dir / path);
            inputs.push_back(path);
        }
    }
    return inputs;
}

}  // namespace

TEST_CASE("shard: N runs do every input once, as one run would", "[cli][batch][shard]") {
    TempDir dir;
    const std::vector<std::string> inputs = make_tree(dir);
    const std::vector<std::string> args{"in", "-r", "-f", "edge", "-k", "cpu", "--json", "-"};
    auto single = args;
    single.insert(single.end(), {"-o", "single/"});
    const auto whole = run_cudaconv(single, dir.path());
    INFO(whole.err);
    REQUIRE(whole.exit_code == 0);

    std::multiset<std::string> done;
    for (int k = 0; k < 3; ++k) {
        auto shard_args = args;
        shard_args.insert(shard_args.end(), {"-o", "out/", "--shard", std::to_string(k) + "/3"});
        const auto r = run_cudaconv(shard_args, dir.path());
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        CHECK(r.err.empty());  // silent on success, as without --shard
        const auto lines = json_by_input(r.out);
        for (const auto& [input, line] : lines) done.insert(input);
        const auto summary = summary_of(r.out);
        CHECK(summary["shard"] == std::to_string(k) + "/3");
        CHECK(summary["total"] == lines.size());
        CHECK(lines.size() < inputs.size());  // 12 inputs do not all hash to one of 3
    }
    CHECK(done == std::multiset<std::string>(inputs.begin(), inputs.end()));
    for (const std::string& input : inputs) {
        const std::string rel = fs::path(input).lexically_relative("in").string();
        INFO(rel);
        CHECK(read_bytes(dir / ("out/" + rel)) == read_bytes(dir / ("single/" + rel)));
    }
}

TEST_CASE("shard: --skip-existing resumes a shard", "[cli][batch][shard]") {
    TempDir dir;
    make_tree(dir);
    const std::vector<std::string> args{
        "in", "-r", "-f", "edge", "-k", "cpu", "--shard", "1/2", "-o", "out/", "--skip-existing",
        "-v"};
    const auto first = run_cudaconv(args, dir.path());
    INFO(first.err);
    REQUIRE(first.exit_code == 0);
    CHECK_THAT(first.err, Catch::Contains("skipped 0, failed 0 of"));
    CHECK_THAT(first.err, Catch::Contains("; shard 1/2"));
    std::vector<fs::path> written;
    for (const auto& e : fs::recursive_directory_iterator(dir / "out")) {
        if (e.is_regular_file()) written.push_back(e.path());
    }
    REQUIRE(written.size() >= 2);
    fs::remove(written.front());  // as if the run had stopped before it

    const auto again = run_cudaconv(args, dir.path());
    INFO(again.err);
    CHECK(again.exit_code == 0);
    CHECK_THAT(again.err,
               Catch::Contains("done 1, skipped " + std::to_string(written.size() - 1) +
                               ", failed 0 of " + std::to_string(written.size()) + " images"));
    CHECK(fs::exists(written.front()));
}

TEST_CASE("shard: a shard with no inputs does nothing and succeeds", "[cli][batch][shard]") {
    TempDir dir;
    copy_sample("camera-crop.png", dir / "in" / "only.png");
    int planned = 0;
    for (int k = 0; k < 4; ++k) {
        const auto r = run_cudaconv({"in", "-f", "edge", "-k", "cpu", "--json", "-", "-o", "out/",
                                     "--shard", std::to_string(k) + "/4"},
                                    dir.path());
        INFO(r.err);
        CHECK(r.exit_code == 0);
        CHECK(r.err.empty());
        planned += summary_of(r.out)["total"].get<int>();
    }
    CHECK(planned == 1);
    CHECK(fs::exists(dir / "out" / "only.png"));
}

TEST_CASE("shard: refuses values that name no shard, before any work", "[cli][batch][shard]") {
    TempDir dir;
    copy_sample("camera-crop.png", dir / "in" / "a.png");
    const std::map<std::string, std::string> refusals{
        {"4/4", "K counts from 0, so shard K of 4 is 0 to 3"},
        {"0/0", "N must be at least 1"},
        {"-1/3", "K and N must be whole numbers"},
        {"a/b", "K and N must be whole numbers"},
        {"3", "expected K/N"},
    };
    for (const auto& [value, reason] : refusals) {
        INFO(value);
        const auto r =
            run_cudaconv({"in", "-f", "edge", "-o", "out/", "--shard=" + value}, dir.path());
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Contains("error: --shard \"" + value + "\": " + reason));
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK(!fs::exists(dir / "out"));
    }
}

}  // namespace cudaconv::test

namespace cudaconv::test {

// A task's own list under --from-root writes what the folder would.
TEST_CASE("shard: a --from list under --from-root mirrors the tree", "[cli][batch][shard]") {
    TempDir dir;
    const std::vector<std::string> inputs = make_tree(dir);
    std::string list;
    for (const std::string& input : inputs) list += input + "\n";
    write_file(dir / "list.txt", list);
    const auto listed = run_cudaconv(
        {"--from", "list.txt", "--from-root", "in", "-f", "edge", "-k", "cpu", "-o", "listed/"},
        dir.path());
    INFO(listed.err);
    REQUIRE(listed.exit_code == 0);
    const auto walked =
        run_cudaconv({"in", "-r", "-f", "edge", "-k", "cpu", "-o", "walked/"}, dir.path());
    REQUIRE(walked.exit_code == 0);
    for (const std::string& input : inputs) {
        const std::string rel = fs::path(input).lexically_relative("in").string();
        INFO(rel);
        CHECK(read_bytes(dir / ("listed/" + rel)) == read_bytes(dir / ("walked/" + rel)));
    }
}

}  // namespace cudaconv::test
