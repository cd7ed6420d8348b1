// --shard K/N (batch/shard.hpp): the values it takes and refuses, the hash
// as docs/SPEC.md states it, every input in exactly one shard, the key an
// input is hashed by, and a sharded plan's checks across all the inputs.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/errors.hpp"
#include "batch/plan.hpp"
#include "batch/shard.hpp"
#include "io/inputs.hpp"
#include "support/temp_folder.hpp"

namespace cudaconv {
namespace {
namespace fs = std::filesystem;

std::string refusal(const std::string& text) {
    try {
        parse_shard(text);
    } catch (const UsageError& e) {
        return e.what();
    }
    return "accepted";
}

}  // namespace

TEST_CASE("shard: --shard takes K/N with 0 <= K < N and refuses the rest", "[shard]") {
    CHECK(parse_shard("0/1").text() == "0/1");
    CHECK(parse_shard("3/4").index == 3u);
    CHECK(parse_shard("3/4").count == 4u);
    CHECK(parse_shard("999999/1000000").count == kMaxShards);

    CHECK(refusal("4/4") == "--shard \"4/4\": K counts from 0, so shard K of 4 is 0 to 3");
    CHECK(refusal("0/0") == "--shard \"0/0\": N must be at least 1");
    CHECK(refusal("-1/3") ==
          "--shard \"-1/3\": K and N must be whole numbers, 0 <= K < N <= 1000000");
    CHECK(refusal("a/b") ==
          "--shard \"a/b\": K and N must be whole numbers, 0 <= K < N <= 1000000");
    CHECK(refusal("2") ==
          "--shard \"2\": expected K/N, shard K of N counted from 0 (e.g. 0/4 to 3/4)");
    CHECK(refusal("0/1000001") == "--shard \"0/1000001\": N must be at most 1000000");
    for (const char* bad : {"", "/", "1/", "/3", "1/3/4", " 1/3", "1/3 ", "+1/3", "1.0/3", "0x1/3",
                            "99999999/1", "1/99999999999999999999"}) {
        INFO(bad);
        CHECK(refusal(bad) != "accepted");
    }
}

TEST_CASE("the shard hash is FNV-1a 64 then splitmix64's finaliser", "[shard]") {
    // Computed apart from this code, by the Python lines in docs/SPEC.md.
    CHECK(shard_hash("") == 0xf52a15e9a9b5e89bULL);
    CHECK(shard_hash("a.jpg") == 0x2fbf1380fdd590bcULL);
    CHECK(shard_hash("2024/a.jpg") == 0xd7a64cc8309c132eULL);
    CHECK(shard_hash("camera.png") == 0x4386f2c88bfd4b38ULL);
    CHECK(Shard{0, 4}.holds("a.jpg"));
    CHECK(Shard{2, 4}.holds("2024/a.jpg"));
}

TEST_CASE("every key is in exactly one shard, and shards are near even", "[shard]") {
    std::vector<std::string> keys;
    for (int i = 0; i < 10000; ++i) keys.push_back(fmt::format("shoot/{:05}.jpg", i));
    for (std::uint64_t n : {1u, 2u, 3u, 4u, 7u, 16u}) {
        std::vector<std::size_t> per_shard(n, 0);
        for (const std::string& key : keys) {
            int holders = 0;
            for (std::uint64_t k = 0; k < n; ++k) {
                if (Shard{k, n}.holds(key)) {
                    ++holders;
                    ++per_shard[k];
                }
            }
            REQUIRE(holders == 1);
        }
        // Names that differ in a digit or two still spread: within 10% of
        // the even share (a binomial spread is about 3% here at 16).
        const double even = static_cast<double>(keys.size()) / static_cast<double>(n);
        for (std::size_t count : per_shard) {
            INFO(n);
            CHECK(static_cast<double>(count) > 0.9 * even);
            CHECK(static_cast<double>(count) < 1.1 * even);
        }
    }
}

TEST_CASE("an input's shard key is its path relative to its root", "[shard][inputs]") {
    const test::TempFolder dir("cudaconv-shard-");
    dir.write("photos/2024/a.jpg", "x");
    dir.write("photos/b.jpg", "x");
    dir.write("shots/day1/raw/c.png", "x");
    const fs::path named = dir.write("d.png", "x");
    const std::string root = dir.path().string();

    InputRequest request;
    request.args = {root + "/photos", root + "/shots/*/raw/*.png", root + "/./d.png"};
    request.recursive = true;
    std::map<std::string, std::string> relative;  // file name -> key
    for (const InputFile& f : expand_inputs(request)) {
        relative[fs::path(f.path).filename().string()] = f.relative;
    }
    CHECK(relative["a.jpg"] == "2024/a.jpg");
    CHECK(relative["b.jpg"] == "b.jpg");
    CHECK(relative["c.png"] == "day1/raw/c.png");
    CHECK(relative["d.png"] == named.string());  // named: as given, "./" left out

    // The same tree under another root has the same keys.
    const test::TempFolder other("cudaconv-shard-");
    other.write("2024/a.jpg", "x");
    request.args = {other.path().string()};
    CHECK(expand_inputs(request).front().relative == "2024/a.jpg");
}

TEST_CASE("a sharded plan holds its shard and checks every shard's outputs", "[shard][plan]") {
    const test::TempFolder dir("cudaconv-shard-");
    std::vector<InputFile> inputs;
    for (int i = 0; i < 40; ++i) {
        const std::string name = fmt::format("{:02}.png", i);
        inputs.push_back({dir.write("in/" + name, "x").string(), "", name});
    }
    const std::string out = (dir.path() / "out").string() + "/";
    PlanRequest request;
    request.output = {out, "", "edge", "cpu", true};

    std::set<std::string> planned;
    std::size_t total = 0;
    for (std::uint64_t k = 0; k < 4; ++k) {
        request.shard = Shard{k, 4};
        const std::vector<PlannedImage> plan = plan_outputs(inputs, request);
        CHECK(!plan.empty());
        total += plan.size();
        for (const PlannedImage& image : plan) {
            CHECK(request.shard->holds(image.source.relative));
            planned.insert(image.source.path);
        }
    }
    CHECK(total == inputs.size());
    CHECK(planned.size() == inputs.size());

    // Another shard's output that exists already is not this shard's
    // concern; its own is refused as without --shard.
    std::ofstream(out + "00.png") << "written by another shard";
    request.shard = Shard{0, 1};
    CHECK_THROWS_AS(plan_outputs(inputs, request), UsageError);
    for (std::uint64_t k = 0; k < 4; ++k) {
        request.shard = Shard{k, 4};
        if (request.shard->holds(inputs[0].relative)) {
            CHECK_THROWS_AS(plan_outputs(inputs, request), UsageError);
        } else {
            CHECK_NOTHROW(plan_outputs(inputs, request));
        }
    }

    // Two inputs that would write one file are refused by every shard,
    // whichever shards they fall in.
    std::vector<InputFile> clash = {{dir.write("a/x.png", "x").string(), "", "a/x.png"},
                                    {dir.write("b/x.png", "x").string(), "", "b/x.png"}};
    request.output.output = (dir.path() / "clash").string() + "/";
    for (std::uint64_t k = 0; k < 4; ++k) {
        request.shard = Shard{k, 4};
        CHECK_THROWS_WITH(plan_outputs(clash, request), Catch::Contains("would both write"));
    }
}

}  // namespace cudaconv

namespace cudaconv {

TEST_CASE("shard: --from-root gives listed paths their folders and keys", "[shard][inputs]") {
    const test::TempFolder dir("cudaconv-shard-");
    dir.write("photos/2024/a.jpg", "x");
    dir.write("photos/b.jpg", "x");
    dir.write("photos/2025/c.png", "x");
    const std::string root = (dir.path() / "photos").string();
    InputRequest request;
    request.from =
        dir.write("list.txt", root + "/2024/a.jpg\n" + root + "/./b.jpg\n" + root + "/2025\n")
            .string();
    request.from_root = root + "/";
    std::map<std::string, std::pair<std::string, std::string>> seen;  // name -> dir, key
    for (const InputFile& f : expand_inputs(request)) {
        seen[fs::path(f.path).filename().string()] = {f.dir, f.relative};
    }
    CHECK(seen["a.jpg"] == std::make_pair(std::string("2024"), std::string("2024/a.jpg")));
    CHECK(seen["b.jpg"] == std::make_pair(std::string(""), std::string("b.jpg")));
    CHECK(seen["c.png"] == std::make_pair(std::string("2025"), std::string("2025/c.png")));

    request.from = dir.write("outside.txt", dir.path().string() + "/list.txt\n").string();
    CHECK_THROWS_WITH(expand_inputs(request), Catch::Contains(": not under --from-root "));
    request.from.clear();
    request.args = {root};
    CHECK_THROWS_WITH(expand_inputs(request), "--from-root needs --from FILE|-");
}

}  // namespace cudaconv
