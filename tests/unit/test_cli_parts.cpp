// The pieces of the CLI that are plain functions: options to ConvParams,
// and -o to output paths.
#include <catch2/catch.hpp>

#include "cli/conv_params.hpp"
#include "cli/output_path.hpp"
#include "core/errors.hpp"

namespace cudaconv {
namespace {

Filter three_by_two() {
    Filter f;
    f.width = 3;
    f.height = 2;
    f.taps = {1, 2, 3, 4, 5, 6};
    f.label = "3x2";
    return f;
}

}  // namespace

TEST_CASE("anchor defaults to the centre and is checked against the filter", "[cli]") {
    FilterOptions o;
    ConvParams p = build_conv_params(o, three_by_two());
    CHECK(p.anchor_x == 1);
    CHECK(p.anchor_y == 1);

    o.anchor = "2,0";
    p = build_conv_params(o, three_by_two());
    CHECK(p.anchor_x == 2);
    CHECK(p.anchor_y == 0);

    for (const char* bad : {"3,0", "0,2", "-1,0", "1", "1,", ",1", "a,b", "1,1,1", "1.5,0"}) {
        o.anchor = bad;
        CAPTURE(bad);
        CHECK_THROWS_AS(build_conv_params(o, three_by_two()), UsageError);
    }
}

TEST_CASE("flip rotates the taps and mirrors the anchor", "[cli]") {
    FilterOptions o;
    o.flip = true;
    o.anchor = "0,0";
    const ConvParams p = build_conv_params(o, three_by_two());
    CHECK(p.filter.taps == std::vector<double>{6, 5, 4, 3, 2, 1});
    CHECK(p.anchor_x == 2);
    CHECK(p.anchor_y == 1);
}

TEST_CASE("normalize divides by the sum unless it is zero", "[cli]") {
    FilterOptions o;
    o.normalize = true;
    ConvParams p = build_conv_params(o, three_by_two());
    CHECK(p.filter.sum() == Approx(1.0));
    CHECK(p.filter.taps[0] == Approx(1.0 / 21));

    Filter zero_sum = three_by_two();
    zero_sum.taps = {1, -1, 0, 0, 2, -2};
    p = build_conv_params(o, zero_sum);
    CHECK(p.filter.taps == zero_sum.taps);
}

TEST_CASE("border names, aliases and values", "[cli]") {
    FilterOptions o;
    o.border = "clamp";
    CHECK(build_conv_params(o, three_by_two()).border == BorderMode::replicate);
    o.border = "constant";
    o.border_value = 7.5;
    CHECK(build_conv_params(o, three_by_two()).border_value == 7.5);
    o.border = "zero";  // forces 0 whatever --border-value says
    ConvParams p = build_conv_params(o, three_by_two());
    CHECK(p.border == BorderMode::constant);
    CHECK(p.border_value == 0.0);
    o.border = "bogus";
    CHECK_THROWS_AS(build_conv_params(o, three_by_two()), UsageError);
    o.border = "constant";
    o.border_value = std::numeric_limits<double>::infinity();
    CHECK_THROWS_AS(build_conv_params(o, three_by_two()), UsageError);
}

TEST_CASE("a filter's own offset joins --delta after --scale", "[cli]") {
    FilterOptions o;
    o.scale = 2.0;
    o.delta = 1.0;
    Filter f = three_by_two();
    f.delta = 10.0;
    const ConvParams p = build_conv_params(o, f);
    CHECK(p.scale == 2.0);
    CHECK(p.delta == 21.0);
}

TEST_CASE("output paths: file, folder, template, stdout", "[cli]") {
    OutputRequest r{"out.png", "", "gaussian:sigma=2", "cpu-ref", false};
    CHECK(resolve_output(r, "in/cat.jpg").path == "out.png");
    CHECK(resolve_output(r, "in/cat.jpg").extension == ".png");

    r.output = "res/";
    CHECK(resolve_output(r, "in/cat.jpg").path == "res/cat.jpg");

    r.output = "res/{stem}-{filter}-{kernel}.{ext}";
    CHECK(resolve_output(r, "in/cat.JPG").path == "res/cat-gaussian-sigma-2-cpu-ref.JPG");
    CHECK(resolve_output(r, "in/cat.JPG").extension == ".jpg");

    r.output = "-";
    CHECK(resolve_output(r, "cat.jpg").extension == ".jpg");
    r.format = "png";
    CHECK(resolve_output(r, "cat.jpg").extension == ".png");
    CHECK(resolve_output(r, "-").path == "-");

    r.output = "res/{stem}.{bogus}";
    CHECK_THROWS_AS(resolve_output(r, "a.png"), UsageError);
    r.output = "res/{stem";
    CHECK_THROWS_AS(resolve_output(r, "a.png"), UsageError);

    r.several_inputs = true;
    r.output = "one.png";
    CHECK_THROWS_AS(resolve_output(r, "a.png"), UsageError);
    r.output = "-";
    CHECK_THROWS_AS(resolve_output(r, "a.png"), UsageError);
    r.output = "res/{stem}.png";
    CHECK(resolve_output(r, "a.png").path == "res/a.png");
}

TEST_CASE("template roots: the folder named before the first field", "[cli]") {
    CHECK(template_root("{stem}.png") == ".");
    CHECK(template_root("{dir}/{stem}.png") == ".");
    CHECK(template_root("out/{dir}/{stem}.png") == "out");
    CHECK(template_root("out/pre-{stem}.png") == "out");
    CHECK(template_root("a/b/{stem}/x.png") == "a/b");
    CHECK(template_root("../res/{stem}.png") == "../res");
    CHECK(template_root("/srv/out/{stem}.png") == "/srv/out");
    CHECK(template_root("/{stem}.png") == "/");
}

TEST_CASE("templates: an empty {dir} is the root, never /", "[cli]") {
    OutputRequest r{"{dir}/{stem}.png", "", "edge", "cpu", true};
    CHECK(resolve_output(r, {"in.png", ""}).path == "in.png");
    CHECK(resolve_output(r, {"tree/x/a.png", "x"}).path == "x/a.png");
    r.output = "{dir}/{stem}-e.png";
    CHECK(resolve_output(r, {"tree/top.png", ""}).path == "top-e.png");
    r.output = "out/{dir}/{stem}-{filter}.png";
    CHECK(resolve_output(r, {"tree/top.png", ""}).path == "out/top-edge.png");
    CHECK(resolve_output(r, {"tree/x/y/a.png", "x/y"}).path == "out/x/y/a-edge.png");
    // A component with text beside the empty field stays.
    r.output = "out/{dir}x/{stem}.png";
    CHECK(resolve_output(r, {"a.png", ""}).path == "out/x/a.png");
    // A folder output mirrors the same way.
    r.output = "res/";
    CHECK(resolve_output(r, {"in/a.png", ""}).path == "res/a.png");
    CHECK(resolve_output(r, {"in/x/a.png", "x"}).path == "res/x/a.png");
}

TEST_CASE("templates: no field leads outside the root, a literal .. does", "[cli]") {
    OutputRequest r{"out/{dir}/{stem}.png", "", "edge", "cpu", true};
    // ".." in {dir} (a pattern such as 'in/*/../../top.png' gives it).
    CHECK_THROWS_WITH(resolve_output(r, {"in/a/../../top.png", ".."}),
                      "in/a/../../top.png: -o \"out/{dir}/{stem}.png\" would write top.png, "
                      "outside out (the folder -o names before its first field); nothing was "
                      "done");
    CHECK_THROWS_AS(resolve_output(r, {"a.png", "x/../.."}), UsageError);
    // ".." that stays inside is tidied away.
    CHECK(resolve_output(r, {"x/../a.png", "x/y/.."}).path == "out/x/a.png");
    // ".." as {stem}: an input named "..." (its extension ".").
    r.output = "out/{stem}/e.png";
    CHECK_THROWS_AS(resolve_output(r, {"...", ""}), UsageError);
    r.output = "{stem}/e.png";
    CHECK_THROWS_AS(resolve_output(r, {"...", ""}), UsageError);
    // A folder output gets the same check.
    r.output = "res/";
    CHECK_THROWS_WITH(resolve_output(r, {"up/a.png", ".."}),
                      Catch::Contains("outside res/ (the folder -o names)"));
    // ".." written in -o is the user's: the root includes it.
    r.output = "../res/{dir}/{stem}.png";
    CHECK(resolve_output(r, {"a.png", ""}).path == "../res/a.png");
    CHECK(resolve_output(r, {"x/a.png", "x"}).path == "../res/x/a.png");
    CHECK_THROWS_AS(resolve_output(r, {"a.png", ".."}), UsageError);
    r.output = "out/../{stem}.png";
    CHECK(resolve_output(r, {"a.png", ""}).path == "a.png");
    // Absolute roots.
    r.output = "/srv/out/{dir}/{stem}.png";
    CHECK(resolve_output(r, {"a.png", ""}).path == "/srv/out/a.png");
    CHECK(resolve_output(r, {"x/a.png", "x"}).path == "/srv/out/x/a.png");
    CHECK_THROWS_AS(resolve_output(r, {"a.png", "../.."}), UsageError);
    r.output = "/{dir}/{stem}.png";  // "/" written by the user
    CHECK(resolve_output(r, {"a.png", ""}).path == "/a.png");
}

TEST_CASE("output paths: --format applies to stdout and to the {ext} of an input without one", "[cli]") {
    OutputRequest r{"-", "jpg", "edge", "cpu", false};
    CHECK(format_applies(r, "a.png"));
    r.output = "out/{stem}.{ext}";
    CHECK(format_applies(r, "-"));
    CHECK(format_applies(r, "noextension"));
    CHECK_FALSE(format_applies(r, "a.png"));
    r.output = "out/";
    CHECK(format_applies(r, "-"));
    CHECK_FALSE(format_applies(r, "a.png"));
    r.output = "out/{stem}.png";
    CHECK_FALSE(format_applies(r, "-"));
    r.output = "x.png";
    CHECK_FALSE(format_applies(r, "-"));
}

}  // namespace cudaconv
