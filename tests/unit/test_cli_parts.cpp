// The pieces of the CLI that are plain functions: options to ConvParams,
// and -o to output paths.
#include <catch2/catch.hpp>

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "cli/conv_params.hpp"
#include "cli/logging.hpp"
#include "cli/parse_errors.hpp"
#include "cli/terminal.hpp"
#include "io/output_path.hpp"
#include "base/errors.hpp"
#include "filters/spec.hpp"

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

// Exactly, for a spec: %.17g gives back the same double.
std::string exact(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", value);
    return text;
}

// The largest float32 tap whose worst-case sum on u16 samples,
// tap x 65535, stays within float32.
float largest_safe_tap() {
    float tap = FLT_MAX / 65535.0f;
    while (static_cast<double>(tap) * 65535.0 > FLT_MAX) tap = std::nextafterf(tap, 0.0f);
    while (static_cast<double>(std::nextafterf(tap, FLT_MAX)) * 65535.0 <= FLT_MAX) {
        tap = std::nextafterf(tap, FLT_MAX);
    }
    return tap;
}

std::string range_error(const FilterOptions& o, const std::string& spec) {
    try {
        build_conv_params(o, parse_filter_spec(spec));
    } catch (const UsageError& e) {
        return e.what();
    }
    return "accepted";
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

TEST_CASE("taps, scale and delta whose worst-case sum overflows float32 are refused", "[cli]") {
    const FilterOptions defaults;
    CHECK(range_error(defaults, "1x1:1e308") ==
          "filter \"1x1:1e308\": the filter's taps overflow float32 (worst-case sum inf)");
    CHECK(range_error(defaults, "2x1:1e308,-1e308") ==
          "filter \"2x1:1e308,-1e308\": the filter's taps overflow float32 (worst-case sum inf)");
    CHECK(range_error(defaults, "1x1:1e35") ==
          "filter \"1x1:1e35\": the filter's taps overflow float32 (worst-case sum 6.6e+39)");
    CHECK(range_error(defaults, "unsharp:3:1e300") != "accepted");

    // The edges: the largest float32 tap (and pair) that is safe on a
    // 65535 sample is accepted, the next float32 up refused.
    const float tap = largest_safe_tap();
    const float over = std::nextafterf(tap, FLT_MAX);
    CHECK(range_error(defaults, "1x1:" + exact(tap)) == "accepted");
    CHECK_THAT(range_error(defaults, "1x1:" + exact(over)),
               Catch::Contains("the filter's taps overflow float32 (worst-case sum 3.4e+38)"));
    CHECK(range_error(defaults, "2x1:" + exact(tap / 2) + ",-" + exact(tap / 2)) == "accepted");
    CHECK(range_error(defaults, "2x1:" + exact(over / 2) + ",-" + exact(over / 2)) != "accepted");

    // --scale multiplies the sum; a small one does not rescue taps that
    // float32 cannot hold (the variants sum before they scale).
    FilterOptions o;
    o.scale = tap;
    CHECK(range_error(o, "identity") == "accepted");
    o.scale = over;
    CHECK_THAT(range_error(o, "identity"),
               Catch::StartsWith("filter \"identity\": the output overflows float32"));
    o.scale = 1e-30;
    CHECK_THAT(range_error(o, "1x1:1e39"), Catch::Contains("the filter's taps overflow float32"));

    // --delta up to FLT_MAX; one double more is out of float32.
    o = defaults;
    o.delta = FLT_MAX;
    CHECK(range_error(o, "identity") == "accepted");
    o.delta = -std::nextafter(static_cast<double>(FLT_MAX), HUGE_VAL);
    CHECK_THAT(range_error(o, "identity"), Catch::Contains("the output overflows float32"));

    // A constant border's value is a sample too.
    o = defaults;
    o.border = "constant";
    o.border_value = 1e38;
    CHECK_THAT(range_error(o, "1x1:10"), Catch::Contains("the filter's taps overflow float32"));
    o.border = "reflect";  // the value is ignored then
    CHECK(range_error(o, "1x1:10") == "accepted");
}

TEST_CASE("normalize works on taps whose sum overflows a double", "[cli]") {
    FilterOptions o;
    o.normalize = true;
    CHECK(build_conv_params(o, parse_filter_spec("2x1:1e308,1e308")).filter.taps ==
          std::vector<double>{0.5, 0.5});
    CHECK(build_conv_params(o, parse_filter_spec("3x1:1e308,1e308,-1e308")).filter.taps ==
          std::vector<double>{1, 1, -1});
    // Taps that cancel exactly keep their values, and are refused as they are.
    CHECK_THAT(range_error(o, "4x1:1e308,1e308,-1e308,-1e308"),
               Catch::Contains("the filter's taps overflow float32"));
}

TEST_CASE("output paths: file, folder, template, stdout", "[cli]") {
    OutputRequest r{"out.png", "", "gaussian:sigma=2", "cpu-ref", false, ""};
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
    OutputRequest r{"{dir}/{stem}.png", "", "edge", "cpu", true, ""};
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
    OutputRequest r{"out/{dir}/{stem}.png", "", "edge", "cpu", true, ""};
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

TEST_CASE("output paths: --format applies to stdout and to the {ext} of an input without one",
          "[cli]") {
    OutputRequest r{"-", "jpg", "edge", "cpu", false, ""};
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

// As gzip: image bytes on a terminal are refused; redirected, they are not.
TEST_CASE("image data to a terminal (-o -) is refused, and only there", "[cli]") {
    CHECK_THROWS_MATCHES(refuse_image_data_to_terminal("-", true), UsageError,
                         Catch::Message("-o -: refusing to write image data to a terminal "
                                        "(redirect stdout, or give -o FILE)"));
    CHECK_NOTHROW(refuse_image_data_to_terminal("-", false));
    CHECK_NOTHROW(refuse_image_data_to_terminal("out.png", true));
    CHECK_NOTHROW(refuse_image_data_to_terminal("out/", true));
    CHECK_NOTHROW(refuse_image_data_to_terminal("{stem}-.png", true));
}

TEST_CASE("progress line: on a terminal, not under -q, nor beside --json - on one", "[cli]") {
    ProgressBarCase c;
    c.stderr_is_terminal = true;
    c.images = 2;
    CHECK(progress_bar_wanted(c));
    c.images = 1;  // one image: nothing to count
    CHECK_FALSE(progress_bar_wanted(c));
    c.images = 2;
    c.quiet = true;
    CHECK_FALSE(progress_bar_wanted(c));
    c.quiet = false;
    c.json_to_stdout = true;  // into a pipe or a file: the terminal shows only the bar
    CHECK(progress_bar_wanted(c));
    c.stdout_is_terminal = true;  // JSON lines on the terminal too: no bar among them
    CHECK_FALSE(progress_bar_wanted(c));
    c.json_to_stdout = false;  // --json FILE, or none
    CHECK(progress_bar_wanted(c));
    c.stderr_is_terminal = false;
    CHECK_FALSE(progress_bar_wanted(c));
}

TEST_CASE("log colours: on a terminal only, and never under NO_COLOR", "[cli]") {
    CHECK(log_colour_wanted(true, nullptr));
    CHECK(log_colour_wanted(true, ""));  // set but empty: as unset (no-color.org)
    CHECK_FALSE(log_colour_wanted(true, "1"));
    CHECK_FALSE(log_colour_wanted(false, nullptr));
    CHECK_FALSE(log_colour_wanted(false, "1"));
}

}  // namespace cudaconv

namespace cudaconv {

TEST_CASE("unknown options: the option most likely meant", "[cli]") {
    CLI::App app;
    int value = 0;
    bool flag = false;
    app.add_option("--jpeg-quality", value);
    app.add_option("--size", value);
    app.add_option("-o,--output", value);
    app.add_flag("-q,--quiet", flag);
    CHECK(closest_option(app, "output") == "output");
    CHECK(closest_option(app, "OUTPUT") == "output");         // any case
    CHECK(closest_option(app, "quality") == "jpeg-quality");  // a part of the name
    CHECK(closest_option(app, "qualty") == "jpeg-quality");   // a typo of a part
    CHECK(closest_option(app, "jpeg-qualty") == "jpeg-quality");
    CHECK(closest_option(app, "sizes") == "size");  // a typo of the whole
    CHECK(closest_option(app, "frobnicate").empty());
    CHECK(closest_option(app, "o").empty());  // one letter is no word to match
    CHECK(closest_option(app, "").empty());
}

}  // namespace cudaconv
