// `cudaconv compare A B` and `cudaconv compare DIR_A DIR_B`: reads, converts
// when asked, diffs (compare/image_diff), judges against the limits, prints
// text or JSON on stdout and writes heat maps.
#include "cli/compare_command.hpp"

#include <cmath>
#include <filesystem>
#include <iostream>
#include <set>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include <opencv2/core.hpp>
#include <spdlog/spdlog.h>

#include "cli/filter_options.hpp"
#include "cli/number_options.hpp"
#include "io/output_path.hpp"
#include "compare/folder_match.hpp"
#include "base/errors.hpp"
#include "core/json_text.hpp"
#include "base/printable.hpp"
#include "io/image_io.hpp"
#include "io/made_folders.hpp"

namespace cudaconv {
namespace fs = std::filesystem;
namespace {

enum class Status { ok, outside_limits, missing, extra, error };

const char* status_word(Status s) {
    switch (s) {
        case Status::ok: return "ok";
        case Status::outside_limits: return "FAIL";
        case Status::missing: return "missing";
        case Status::extra: return "extra";
        case Status::error: return "error";
    }
    return "?";
}

struct FileResult {
    std::string label;  // the relative path in folder mode, else "A vs B"
    Status status = Status::ok;
    std::optional<ImageDiff> diff;
    std::vector<std::string> violations;
    std::string problem;   // for Status::error
    std::string heat_map;  // where the heat map went, if one was written
};

// The settings every comparison shares, checked once before any work.
struct Plan {
    DiffLimits limits;
    std::optional<Depth> depth;  // convert both images to it
};

Plan make_plan(const CompareOptions& o) {
    Plan plan;
    plan.limits.max_abs = o.max_abs;
    plan.limits.max_rel = o.max_rel;
    plan.limits.min_psnr = o.min_psnr;
    if (!o.max_differing.empty()) {
        try {
            plan.limits.max_differing = parse_differing_limit(o.max_differing);
        } catch (const std::invalid_argument& e) {
            throw UsageError(e.what());
        }
    }
    if (o.depth == "u8") plan.depth = Depth::u8;
    else if (o.depth == "u16") plan.depth = Depth::u16;
    else if (o.depth == "f32") plan.depth = Depth::f32;
    return plan;
}

// --ignore-alpha drops a 4th channel; --depth converts the samples as
// cv::saturate_cast does (values kept, rounded half to even, saturated).
cv::Mat prepared(cv::Mat image, const CompareOptions& o, const Plan& plan) {
    if (o.ignore_alpha && image.channels() == 4) {
        cv::Mat colour(image.size(), CV_MAKETYPE(image.depth(), 3));
        const int from_to[] = {0, 0, 1, 1, 2, 2};
        cv::mixChannels(&image, 1, &colour, 1, from_to, 3);
        image = colour;
    }
    if (plan.depth && depth_of(image) != *plan.depth) {
        cv::Mat converted;
        image.convertTo(converted, CV_MAKETYPE(cv_type_of(*plan.depth, 1), image.channels()));
        image = converted;
    }
    return image;
}

void write_heat_map(const cv::Mat& a, const cv::Mat& b, const std::string& path) {
    const cv::Mat heat = diff_heat_map(a, b);
    write_file_atomically(path, encode_image(heat, extension_of(path), EncodeOptions{}, path));
}

// Before any comparison: no heat map may replace an input, or a file that
// exists unless --overwrite, and each one's folder must be one that can be
// made. UsageError otherwise.
void check_heat_maps(const std::vector<std::string>& heat_maps,
                     const std::vector<std::string>& inputs, const CompareOptions& o) {
    auto canonical = [](const std::string& path) {
        std::error_code ec;
        const fs::path p = fs::weakly_canonical(path, ec);
        return ec ? fs::path() : p;
    };
    std::set<fs::path> input_paths;
    for (const std::string& input : inputs) input_paths.insert(canonical(input));
    input_paths.erase(fs::path());
    std::vector<std::string> existing;
    std::error_code ec;
    for (const std::string& heat_map : heat_maps) {
        if (input_paths.count(canonical(heat_map))) {
            throw UsageError(fmt::format("--diff {}: would overwrite an input", heat_map));
        }
        const std::string file = file_in_the_way(fs::path(heat_map).parent_path().string());
        if (!file.empty()) {
            throw UsageError(fmt::format("--diff {}: {} is a file, not a folder", heat_map, file));
        }
        if (fs::exists(fs::symlink_status(heat_map, ec))) existing.push_back(heat_map);
    }
    if (existing.empty() || o.overwrite) return;
    if (existing.front() == o.diff_path) {
        throw UsageError(fmt::format("--diff {}: exists already; nothing was compared "
                                     "(--overwrite replaces it)",
                                     o.diff_path));
    }
    const bool one = existing.size() == 1;
    throw UsageError(fmt::format("--diff {}: {} heat map{} exist{} already ({}{}); nothing was "
                                 "compared (--overwrite replaces {})",
                                 o.diff_path, existing.size(), one ? "" : "s", one ? "s" : "",
                                 existing.front(), one ? "" : ", ...", one ? "it" : "them"));
}

// --max-pixels, and the memory check with room for a converted copy of
// each image (--depth, --ignore-alpha).
ReadOptions read_options(const CompareOptions& o) {
    ReadOptions options;
    options.max_pixels = o.max_pixels;
    options.bytes_beside = [](const ImageShape& shape) { return shape.bytes(); };
    return options;
}

// One pair of files. A file that cannot be read or compared is an error
// result, not an exception, so a folder comparison goes on.
FileResult compare_files(const std::string& a_path, const std::string& b_path, std::string label,
                         const std::string& heat_map_path, bool heat_map_only_when_different,
                         const CompareOptions& o, const Plan& plan) {
    FileResult r;
    r.label = std::move(label);
    try {
        const cv::Mat a = prepared(read_image(a_path, read_options(o)), o, plan);
        const cv::Mat b = prepared(read_image(b_path, read_options(o)), o, plan);
        if (const std::string problem = comparability_problem(a, b); !problem.empty()) {
            r.status = Status::error;
            r.problem = fmt::format("{} vs {}: {}", a_path, b_path, problem);
            return r;
        }
        r.diff = diff_images(a, b, o.pixel_threshold);
        r.violations = limit_violations(*r.diff, plan.limits);
        r.status = r.violations.empty() ? Status::ok : Status::outside_limits;
        if (!heat_map_path.empty() && !(heat_map_only_when_different && r.diff->identical())) {
            const fs::path folder = fs::path(heat_map_path).parent_path();
            if (!folder.empty()) {
                std::error_code ec;
                make_folders(folder.string(), ec);
                if (ec) throw fs::filesystem_error("cannot create the folder", folder, ec);
            }
            write_heat_map(a, b, heat_map_path);
            r.heat_map = heat_map_path;
        }
    } catch (const std::filesystem::filesystem_error& e) {
        r.status = Status::error;
        r.problem = describe(e);
    } catch (const std::exception& e) {
        r.status = Status::error;
        r.problem = e.what();
    }
    return r;
}

std::string number(double v) {
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    return fmt::format("{:.6g}", v);
}

std::string values(const std::vector<double>& v) {
    std::vector<std::string> parts;
    for (double x : v) parts.push_back(number(x));
    return fmt::format("[{}]", fmt::join(parts, ", "));
}

void print_details(const ImageDiff& d, const char* indent) {
    fmt::print("{}max-abs    {}\n", indent, number(d.max_abs));
    fmt::print("{}max-rel    {}\n", indent, number(d.max_rel));
    fmt::print("{}mean-abs   {}\n", indent, number(d.mean_abs));
    fmt::print("{}rmse       {}\n", indent, number(d.rmse));
    fmt::print("{}psnr       {}\n", indent,
               std::isinf(d.psnr) ? "inf dB (identical)" : fmt::format("{:.2f} dB", d.psnr));
    fmt::print("{}differing  {} of {} pixels ({:.4g}%)\n", indent, d.differing_pixels, d.pixels,
               100.0 * d.differing_share());
    if (d.worst_x >= 0) {
        // OpenCV's channel order: B, G, R, A for colour images.
        fmt::print("{}worst      x={} y={} channel {}: {} vs {} (the pixel: {} vs {})\n", indent,
                   d.worst_x, d.worst_y, d.worst_channel, number(d.worst_a[d.worst_channel]),
                   number(d.worst_b[d.worst_channel]), values(d.worst_a), values(d.worst_b));
    }
}

std::string shape(const ImageDiff& d) {
    return fmt::format("{}x{}, {} channel{}, {}", d.width, d.height, d.channels,
                       d.channels == 1 ? "" : "s", depth_name(d.depth));
}

// Paths escaped (base/printable.hpp): a file name in a folder must not
// write terminal codes or lines of its own into the report.
void print_text(const FileResult& r, bool folder_mode) {
    const char* word = status_word(r.status);
    const std::string label = printable(r.label);
    if (r.status == Status::missing) {
        fmt::print("{:<7} {} (only in the expected folder)\n", word, label);
        return;
    }
    if (r.status == Status::extra) {
        fmt::print("{:<7} {} (only in the folder under test)\n", word, label);
        return;
    }
    if (r.status == Status::error) {
        fmt::print("{:<7} {}: {}\n", word, label, printable(r.problem));
        return;
    }
    const ImageDiff& d = *r.diff;
    fmt::print("{:<7} {} ({}){}{}\n", word, label, shape(d), r.violations.empty() ? "" : ": ",
               fmt::join(r.violations, "; "));
    // In a folder, details only where they help: for files outside limits.
    if (!folder_mode || r.status != Status::ok) print_details(d, "  ");
    if (!r.heat_map.empty()) fmt::print("  diff       {}\n", printable(r.heat_map));
}

nlohmann::json to_json(const FileResult& r) {
    nlohmann::json j{{"path", r.label}, {"status", status_word(r.status)}};
    if (r.status == Status::outside_limits) j["status"] = "fail";
    if (r.status == Status::error) j["problem"] = r.problem;
    if (!r.diff) return j;
    const ImageDiff& d = *r.diff;
    // JSON has no infinity: an infinite value is null, and "identical"
    // says why psnr is null for equal images.
    auto finite = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); };
    j["width"] = d.width;
    j["height"] = d.height;
    j["channels"] = d.channels;
    j["depth"] = std::string(depth_name(d.depth));
    j["identical"] = d.identical();
    j["max_abs"] = finite(d.max_abs);
    j["max_rel"] = finite(d.max_rel);
    j["mean_abs"] = finite(d.mean_abs);
    j["rmse"] = finite(d.rmse);
    j["psnr"] = finite(d.psnr);
    j["differing_pixels"] = d.differing_pixels;
    j["pixels"] = d.pixels;
    j["differing_share"] = d.differing_share();
    if (d.worst_x >= 0) {
        nlohmann::json a, b;
        for (double v : d.worst_a) a.push_back(finite(v));
        for (double v : d.worst_b) b.push_back(finite(v));
        j["worst"] = {
            {"x", d.worst_x}, {"y", d.worst_y}, {"channel", d.worst_channel}, {"a", a}, {"b", b}};
    } else {
        j["worst"] = nullptr;
    }
    j["violations"] = r.violations;
    if (!r.heat_map.empty()) j["diff_image"] = r.heat_map;
    return j;
}

bool counts_as_failure(Status s, const CompareOptions& o) {
    return s == Status::outside_limits || s == Status::missing ||
           (s == Status::extra && !o.ignore_extra);
}

int exit_code(const std::vector<FileResult>& results, const CompareOptions& o) {
    bool failed = false;
    for (const FileResult& r : results) {
        if (r.status == Status::error) return kExitUsage;
        failed = failed || counts_as_failure(r.status, o);
    }
    return failed ? kExitWorkFailed : kExitOk;
}

int compare_single(const CompareOptions& o, const Plan& plan) {
    if (!o.diff_path.empty()) {
        check_output_format(o.diff_path, extension_of(o.diff_path), Depth::u8, 3);
        check_heat_maps({o.diff_path}, {}, o);  // not an input: run_compare_command checked
    }
    const FileResult r =
        compare_files(o.a, o.b, fmt::format("{} vs {}", o.a, o.b), o.diff_path, false, o, plan);
    if (r.status == Status::error) {
        // The one-line error on stderr, as for every other command.
        spdlog::error("{}", r.problem);
        if (o.json) fmt::print("{}\n", json_text(to_json(r)));
        return kExitUsage;
    }
    if (o.json) {
        nlohmann::json j = to_json(r);
        j["a"] = o.a;
        j["b"] = o.b;
        j.erase("path");
        fmt::print("{}\n", json_text(j));
    } else {
        print_text(r, false);
    }
    return exit_code({r}, o);
}

int compare_folders(const CompareOptions& o, const Plan& plan) {
    const FolderMatch match = match_folders(o.a, o.b);
    // Every heat map that may be written: one for each pair that differs.
    std::vector<std::string> heat_maps;
    if (!o.diff_path.empty()) {
        for (const std::string& rel : match.both) {
            heat_maps.push_back(
                (fs::path(o.diff_path) / fs::path(rel).replace_extension(".png")).string());
        }
        std::vector<std::string> inputs;
        for (const std::string& rel : match.both) {
            inputs.push_back((fs::path(o.a) / rel).string());
            inputs.push_back((fs::path(o.b) / rel).string());
        }
        for (const std::string& rel : match.missing)
            inputs.push_back((fs::path(o.b) / rel).string());
        for (const std::string& rel : match.extra) inputs.push_back((fs::path(o.a) / rel).string());
        check_heat_maps(heat_maps, inputs, o);
    }
    std::vector<FileResult> results;
    for (std::size_t i = 0; i < match.both.size(); ++i) {
        const std::string& rel = match.both[i];
        results.push_back(compare_files((fs::path(o.a) / rel).string(),
                                        (fs::path(o.b) / rel).string(), rel,
                                        heat_maps.empty() ? "" : heat_maps[i], true, o, plan));
        if (!o.json) print_text(results.back(), true);
    }
    auto listed_only = [&results](const std::string& rel, Status status) {
        FileResult r;
        r.label = rel;
        r.status = status;
        results.push_back(r);
    };
    for (const std::string& rel : match.missing) listed_only(rel, Status::missing);
    for (const std::string& rel : match.extra) listed_only(rel, Status::extra);
    if (!o.json) {
        for (std::size_t i = match.both.size(); i < results.size(); ++i)
            print_text(results[i], true);
    }

    std::size_t counts[5] = {};
    for (const FileResult& r : results) ++counts[static_cast<int>(r.status)];
    const int code = exit_code(results, o);
    if (o.json) {
        nlohmann::json files = nlohmann::json::array();
        for (const FileResult& r : results) files.push_back(to_json(r));
        nlohmann::json summary{
            {"compared", match.both.size()}, {"ok", counts[0]},    {"fail", counts[1]},
            {"missing", counts[2]},          {"extra", counts[3]}, {"error", counts[4]}};
        fmt::print("{}\n", json_text({{"a", o.a},
                                      {"b", o.b},
                                      {"files", files},
                                      {"summary", summary},
                                      {"ok", code == kExitOk}}));
    } else {
        fmt::print("{}: {} compared, {} ok, {} outside limits, {} missing, {} extra{}, {} errors\n",
                   code == kExitOk ? "ok" : "FAIL", match.both.size(), counts[0], counts[1],
                   counts[2], counts[3], o.ignore_extra && counts[3] ? " (ignored)" : "",
                   counts[4]);
    }
    return code;
}

}  // namespace

void add_compare_options(CLI::App& app, CompareOptions& o) {
    app.add_option("A", o.a, "the image (or folder) under test")->required();
    app.add_option("B", o.b, "the expected image (or folder), e.g. a golden")->required();
    app.add_option("--max-abs", o.max_abs, "largest allowed |A-B| of any sample")
        ->check(finite_non_negative());
    app.add_option("--max-rel", o.max_rel,
                   "largest allowed |A-B| relative to the largest |B| (for float images)")
        ->check(finite_non_negative());
    app.add_option("--min-psnr", o.min_psnr, "smallest allowed PSNR in dB")->check(finite_number());
    app.add_option("--max-differing", o.max_differing,
                   "most pixels allowed to differ: a count (120) or a share (0.5%)");
    app.add_option("--pixel-threshold", o.pixel_threshold,
                   "a pixel differs when a sample differs by more than this (default 0)")
        ->check(finite_non_negative());
    app.add_option("--diff", o.diff_path,
                   "write a heat map of |A-B| (black = equal); for folders, a folder that gets "
                   "one per differing file");
    app.add_option("--depth", o.depth, "convert both images first: same (default), u8, u16, f32")
        ->check(CLI::IsMember({"same", "u8", "u16", "f32"}));
    app.add_flag("--ignore-alpha", o.ignore_alpha, "compare only B, G, R of 4-channel images");
    app.add_flag("--ignore-extra", o.ignore_extra,
                 "folders: files only in A are listed but do not fail the comparison");
    app.add_flag("--json", o.json, "print JSON on stdout instead of text");
    app.add_flag("--overwrite", o.overwrite,
                 "let --diff replace heat maps that exist (default: refuse before comparing)");
    add_max_pixels_option(app, o.max_pixels);
}

int run_compare_command(const CompareOptions& o) {
    const Plan plan = make_plan(o);
    std::error_code ec;
    const bool a_dir = fs::is_directory(o.a, ec);
    const bool b_dir = fs::is_directory(o.b, ec);
    if (a_dir != b_dir) {
        throw UsageError(
            fmt::format("{} is a folder and {} is not: compare two images or two folders",
                        printable(a_dir ? o.a : o.b), printable(a_dir ? o.b : o.a)));
    }
    if (!o.diff_path.empty()) {
        const fs::path diff = fs::weakly_canonical(o.diff_path, ec);
        for (const std::string& input : {o.a, o.b}) {
            if (!ec && diff == fs::weakly_canonical(input, ec)) {
                throw UsageError(
                    fmt::format("--diff {}: would overwrite an input", printable(o.diff_path)));
            }
        }
    }
    return a_dir ? compare_folders(o, plan) : compare_single(o, plan);
}

}  // namespace cudaconv
