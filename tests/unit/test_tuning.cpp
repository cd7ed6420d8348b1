// Tuning values (src/core/tuning.hpp): `bench --param NAME=VALUE` parsed,
// checked against the parameters a variant reads, and a composite's
// parameters merged from its paths'. No device needed.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/tuning.hpp"

namespace cudaconv {

TEST_CASE("Tuning: values by name, unset until set", "[tuning]") {
    Tuning t;
    CHECK(t.empty());
    CHECK_FALSE(t.get("band_rows").has_value());
    t.set("band_rows", 8);
    CHECK_FALSE(t.empty());
    CHECK(t.get("band_rows") == 8);
    t.set("band_rows", 5);  // the last value set
    CHECK(t.get("band_rows") == 5);
    CHECK_FALSE(t.get("band").has_value());
    CHECK_FALSE(t.get("band_rows2").has_value());

    const Tuning listed{{"max_blocks", 3}, {"band_rows", -1}};
    CHECK(listed.values().size() == 2);
    CHECK(listed.get("max_blocks") == 3);
    CHECK(listed.get("band_rows") == -1);
    CHECK(listed.values().begin()->first == "band_rows");  // by name
}

TEST_CASE("parse_tuning_param: NAME=VALUE with an integer value", "[tuning]") {
    CHECK(parse_tuning_param("band_rows=8") == std::pair<std::string, int>{"band_rows", 8});
    CHECK(parse_tuning_param("x=-3") == std::pair<std::string, int>{"x", -3});
    CHECK(parse_tuning_param("head=0") == std::pair<std::string, int>{"head", 0});
    CHECK(parse_tuning_param("max_blocks=1073741824") ==
          std::pair<std::string, int>{"max_blocks", 1 << 30});
    // The name is what precedes the first '='; the value must be all digits.
    for (const char* bad : {"band_rows", "=8", "band_rows=", "band_rows=x", "band_rows=8x",
                            "band_rows=1.5", "band_rows= 8", "band_rows=8 ", "band_rows=+",
                            "band_rows=99999999999", "a=b=c", "a==1", ""}) {
        INFO(bad);
        CHECK_THROWS_AS(parse_tuning_param(bad), std::invalid_argument);
    }
    // The message names the option and the text, printable.
    try {
        parse_tuning_param("band_rows");
        FAIL("no exception");
    } catch (const std::invalid_argument& e) {
        CHECK_THAT(e.what(), Catch::Contains("--param") && Catch::Contains("band_rows") &&
                                 Catch::Contains("NAME=VALUE"));
    }
    try {
        parse_tuning_param("band_rows=eight");
        FAIL("no exception");
    } catch (const std::invalid_argument& e) {
        CHECK_THAT(e.what(), Catch::Contains("integer"));
    }
    try {
        parse_tuning_param("band\x1b[31m=x");
        FAIL("no exception");
    } catch (const std::invalid_argument& e) {
        CHECK_THAT(e.what(), !Catch::Contains("\x1b"));
    }
}

namespace {

const std::vector<TuningParam> kStripParams{
    {"band_rows", "output rows a band", 1, 4096},
    {"head", "0: no head", 0, 0},
    {"dp4a", "0 or 1", 0, 1},
};

}  // namespace

TEST_CASE("tuning_refusal: names a variant reads, values in range", "[tuning]") {
    CHECK(tuning_refusal(Tuning{}, kStripParams, "fast.strips").empty());
    CHECK(tuning_refusal(Tuning{}, {}, "naive").empty());
    CHECK(tuning_refusal(Tuning{{"band_rows", 1}, {"head", 0}, {"dp4a", 1}}, kStripParams,
                         "fast.strips")
              .empty());
    CHECK(tuning_refusal(Tuning{{"band_rows", 4096}}, kStripParams, "fast.strips").empty());

    // Out of range, either end: the range and the value given.
    const std::string low = tuning_refusal(Tuning{{"band_rows", 0}}, kStripParams, "fast.strips");
    CHECK_THAT(low, Catch::Contains("fast.strips") && Catch::Contains("band_rows") &&
                        Catch::Contains("1 to 4096") && Catch::Contains("0 was given"));
    CHECK_FALSE(tuning_refusal(Tuning{{"band_rows", 4097}}, kStripParams, "fast.strips").empty());
    CHECK_FALSE(tuning_refusal(Tuning{{"head", 1}}, kStripParams, "fast.strips").empty());
    CHECK_FALSE(tuning_refusal(Tuning{{"dp4a", -1}}, kStripParams, "fast.strips").empty());

    // A name it does not read: the names it does.
    const std::string unknown =
        tuning_refusal(Tuning{{"max_blocks", 3}}, kStripParams, "fast.strips");
    CHECK_THAT(unknown, Catch::Contains("fast.strips has no parameter max_blocks") &&
                            Catch::Contains("band_rows, head, dp4a"));
    const std::string none = tuning_refusal(Tuning{{"max_blocks", 3}}, {}, "naive");
    CHECK_THAT(none, Catch::Contains("naive has no parameter max_blocks") &&
                         Catch::Contains("it has none"));
    // One bad value among good ones is enough.
    CHECK_FALSE(
        tuning_refusal(Tuning{{"band_rows", 8}, {"zzz", 1}}, kStripParams, "fast.strips").empty());
}

TEST_CASE("merge_tuning_params: each name once, the first description, in order", "[tuning]") {
    const std::vector<TuningParam> walk{{"band_rows", "the walk's band", 1, 4096},
                                        {"tail_rows", "the tail", 0, 1 << 30}};
    const std::vector<TuningParam> tiles{{"max_blocks", "the tiles' grid", 1, 1 << 30}};
    const std::vector<TuningParam> mma{{"max_blocks", "the tensor cores' grid", 1, 1 << 30}};
    const std::vector<TuningParam> merged =
        merge_tuning_params({walk, {}, kStripParams, tiles, mma});
    std::vector<std::string> names;
    for (const TuningParam& p : merged) names.emplace_back(p.name);
    CHECK(names ==
          std::vector<std::string>{"band_rows", "tail_rows", "head", "dp4a", "max_blocks"});
    CHECK(merged[0].meaning == "the walk's band");
    CHECK(merged[4].meaning == "the tiles' grid");
    CHECK(merge_tuning_params({}).empty());
    CHECK(merge_tuning_params({{}, {}}).empty());
    // What the merged list accepts: any path's names.
    CHECK(tuning_refusal(Tuning{{"tail_rows", 9}, {"max_blocks", 2}, {"dp4a", 0}}, merged, "fast")
              .empty());
}

}  // namespace cudaconv
