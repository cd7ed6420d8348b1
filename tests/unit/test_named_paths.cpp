// The composites' named paths in the registry (every path is a variant):
// fast's and fast-separable's paths are registered by name, right after
// their composite, name it as parent, have no auto rank, and list the
// tuning parameters their runs read; the composite reads them all. Holds in
// a build without CUDA too, whose stand-ins keep the names and parents (but
// read no parameters). No device needed: the GPU tests check what they run.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "core/job.hpp"
#include "variants/registry.hpp"
#include "core/tuning.hpp"

namespace cudaconv {
namespace {

// A CUDA variant this build has only as a stand-in (kernels/runtime/no_cuda.cpp).
bool is_stand_in(const Backend& b) {
    return b.uses_cuda() && b.summary().rfind("not in this build", 0) == 0;
}

std::vector<std::string> paths_of(std::string_view composite) {
    std::vector<std::string> names;
    for (const auto& b : all_backends()) {
        if (b->parent() == composite) names.emplace_back(b->name());
    }
    return names;
}

std::vector<std::string> param_names(const Backend& b) {
    std::vector<std::string> names;
    for (const TuningParam& p : b.tuning_params()) names.emplace_back(p.name);
    return names;
}

// Whether every name of `part` is in `whole`.
bool includes(const std::vector<std::string>& whole, const std::vector<std::string>& part) {
    return std::all_of(part.begin(), part.end(), [&](const std::string& n) {
        return std::find(whole.begin(), whole.end(), n) != whole.end();
    });
}

// A 3x3 job with no pixels: enough for auto_rank.
Job small_job() {
    Job job;
    job.params.filter = Filter{3, 3, {-1, -1, -1, -1, 8, -1, -1, -1, -1}};
    job.params.anchor_x = job.params.anchor_y = 1;
    job.src.channels = job.dst.channels = 3;
    return job;
}

struct PathSpec {
    const char* name;
    std::vector<std::string> params;  // what its runs read
};

void check_paths(std::string_view composite, const std::vector<PathSpec>& expected) {
    const Backend* parent = find_backend(composite);
    REQUIRE(parent != nullptr);
    CHECK(parent->parent().empty());
    CHECK(parent->uses_cuda());

    // Exactly these paths, in this order, right after the composite.
    std::vector<std::string> names;
    for (const PathSpec& p : expected) names.emplace_back(p.name);
    CHECK(paths_of(composite) == names);
    const auto& all = all_backends();
    const auto at =
        std::find_if(all.begin(), all.end(), [&](const auto& b) { return b.get() == parent; });
    REQUIRE(at != all.end());
    for (std::size_t i = 0; i < expected.size(); ++i) {
        REQUIRE(at + 1 + static_cast<std::ptrdiff_t>(i) < all.end());
        CHECK((*(at + 1 + static_cast<std::ptrdiff_t>(i)))->name() == expected[i].name);
    }

    std::vector<std::string> union_of_paths;
    for (const PathSpec& spec : expected) {
        const Backend* path = find_backend(spec.name);
        INFO(spec.name);
        REQUIRE(path != nullptr);
        CHECK(path->parent() == composite);
        CHECK(path->uses_cuda());
        CHECK_FALSE(path->auto_rank(small_job()).has_value());
        CHECK_FALSE(path->summary().empty());
        if (is_stand_in(*path)) continue;
        CHECK(param_names(*path) == spec.params);
        for (const TuningParam& p : path->tuning_params()) {
            INFO(p.name);
            CHECK(p.min <= p.max);
            CHECK_FALSE(p.meaning.empty());
        }
        for (const std::string& n : spec.params) union_of_paths.push_back(n);
    }
    if (is_stand_in(*parent)) return;
    CHECK(parent->auto_rank(small_job()).has_value());
    // The composite reads every path's parameters, each name once, and
    // accepts any of them in range.
    const std::vector<std::string> composite_params = param_names(*parent);
    CHECK(includes(composite_params, union_of_paths));
    CHECK(includes(union_of_paths, composite_params));
    std::vector<std::string> sorted = composite_params;
    std::sort(sorted.begin(), sorted.end());
    CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());
}

}  // namespace

TEST_CASE("fast's named paths: registers, walk-u8, strips, tiles, mma, separable",
          "[registry][paths]") {
    check_paths("fast", {{"fast.registers", {"block_rows"}},
                         {"fast.walk-u8", {"band_rows", "tail_rows"}},
                         {"fast.strips",
                          {"band_rows", "head", "head_low", "head_high", "head_group",
                           "sides_first", "dp4a"}},
                         {"fast.tiles", {"max_blocks"}},
                         {"fast.mma", {"max_blocks"}},
                         {"fast.separable", {"max_blocks", "strip_rows"}}});
}

TEST_CASE("fast-separable's named paths: mma, strips", "[registry][paths]") {
    check_paths("fast-separable", {{"fast-separable.mma", {"max_blocks"}},
                                   {"fast-separable.strips", {"strip_rows"}}});
}

// What a test or `bench --param` gives a path is checked against the path's
// own list: a value of another path is refused, not ignored.
TEST_CASE("a named path refuses the tuning values of the others", "[registry][paths]") {
    const Backend* tiles = find_backend("fast.tiles");
    const Backend* fast = find_backend("fast");
    REQUIRE(tiles != nullptr);
    REQUIRE(fast != nullptr);
    if (is_stand_in(*tiles)) return;
    CHECK(tuning_refusal(Tuning{{"max_blocks", 3}}, tiles->tuning_params(), "fast.tiles") == "");
    CHECK_FALSE(
        tuning_refusal(Tuning{{"band_rows", 5}}, tiles->tuning_params(), "fast.tiles").empty());
    CHECK_FALSE(
        tuning_refusal(Tuning{{"max_blocks", 0}}, tiles->tuning_params(), "fast.tiles").empty());
    CHECK(tuning_refusal(Tuning{{"band_rows", 5}, {"max_blocks", 3}, {"block_rows", 8}},
                         fast->tuning_params(), "fast") == "");
    CHECK_FALSE(tuning_refusal(Tuning{{"strip_rows", 16}},
                               find_backend("fast.mma")->tuning_params(), "fast.mma")
                    .empty());
    // Variants of their own read none.
    for (const char* name : {"cpu-ref", "cpu"}) {
        INFO(name);
        CHECK(find_backend(name)->tuning_params().empty());
    }
}

}  // namespace cudaconv
