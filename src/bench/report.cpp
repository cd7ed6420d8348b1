#include "bench/report.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "base/build_info.hpp"
#include "bench/opencv_peer.hpp"
#include "bench/random_data.hpp"

namespace cudaconv {
namespace {

constexpr const char* kRefusedCell = "—";

// Terminal columns of UTF-8 text ("µ" and "—" are one each).
std::size_t display_width(const std::string& text) {
    return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
        return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    }));
}

std::string padded(const std::string& text, std::size_t width) {
    const std::size_t w = display_width(text);
    return w >= width ? text : text + std::string(width - w, ' ');
}

// Three significant digits or so, without exponents.
std::string short_number(double v) {
    if (v < 10.0) return fmt::format("{:.2f}", v);
    if (v < 1000.0) return fmt::format("{:.1f}", v);
    return fmt::format("{:.0f}", v);
}

std::string cell_text(const BenchRow& row) {
    switch (row.status) {
        case RowStatus::refused: return kRefusedCell;
        case RowStatus::wrong: return "WRONG";
        case RowStatus::error: return "ERROR";
        case RowStatus::ok:
        case RowStatus::unverified: break;
    }
    std::string text = fmt::format("{} µs {} GB/s", short_number(row.time.median_ms * 1e3),
                                   short_number(row.gb_per_s));
    if (row.copy_share) text += fmt::format(" {:.0f}%", *row.copy_share * 100.0);
    return text;
}

std::string case_name(const BenchRow& row) {
    return fmt::format("{} {} {} {}", row.variant, row.size.label(), depth_name(row.depth),
                       row.filter);
}

void print_header(std::FILE* out, const BenchReport& report) {
    const BenchContext& c = report.context;
    std::string device;
    if (!c.cuda_wanted) {
        device = "CPU variants only";
    } else if (c.device_name.empty()) {
        device = fmt::format("no CUDA device ({}); CPU variants only", c.device_problem);
    } else if (c.copy_gb_per_s) {
        device = fmt::format("{} (device {}), copy {:.0f} GB/s ({} MiB device to device, read "
                             "+ write)",
                             c.device_name, c.device_index, *c.copy_gb_per_s, c.copy_bytes >> 20);
    } else {
        device = fmt::format("{} (device {}), copy bandwidth not measured", c.device_name,
                             c.device_index);
    }
    fmt::print(out, "cudaconv bench, {}: {}\n", c.date, device);
    std::string how = fmt::format("warmup {}, repeat {}, median shown", c.warmup, c.repeat);
    if (c.rotate_bytes > 0) {
        how += fmt::format("; CUDA inputs rotated over {} MiB (2x L2)", c.rotate_bytes >> 20);
    }
    if (c.cuda_wanted && !c.device_name.empty()) {  // CUDA rows were timed
        how += c.device_timing
                   ? "; CUDA times the device's alone (launches queued behind a held stream)"
                   : "; CUDA times include the host's launch latency (--timing launch)";
    }
    how += fmt::format("; CPU rows stop repeating after {:g} s", c.cpu_budget_s);
    how += fmt::format("; border {}; ", border_name(c.border));
    how += c.verify ? "every output verified" : "outputs NOT verified (--no-verify)";
    fmt::print(out, "{}\n", how);
}

void print_table(std::FILE* out, const BenchReport& report, const std::string& filter,
                 Depth depth) {
    std::vector<const BenchRow*> rows;
    for (const BenchRow& r : report.rows) {
        if (r.filter == filter && r.depth == depth) rows.push_back(&r);
    }
    if (rows.empty()) return;
    const auto find = [&](const std::string& variant, const BenchSize& size) -> const BenchRow* {
        for (const BenchRow* r : rows) {
            if (r->variant == variant && r->size == size) return r;
        }
        return nullptr;
    };

    std::size_t name_width = display_width("variant");
    for (const std::string& v : report.variants) name_width = std::max(name_width, v.size());
    name_width += 2;
    std::vector<std::size_t> widths;
    for (const BenchSize& size : report.sizes) {
        std::size_t w = size.label().size();
        for (const std::string& v : report.variants) {
            if (const BenchRow* r = find(v, size)) w = std::max(w, display_width(cell_text(*r)));
        }
        widths.push_back(w + 3);
    }

    const BenchRow& first = *rows.front();
    fmt::print(out, "\n{} ({}x{}), {}: median µs, GB/s of input + output{}\n", filter,
               first.filter_width, first.filter_height, depth_name(depth),
               report.context.copy_gb_per_s ? ", share of copy bandwidth" : "");
    std::string line = padded("variant", name_width);
    for (std::size_t s = 0; s < report.sizes.size(); ++s) {
        line += padded(report.sizes[s].label(), widths[s]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    fmt::print(out, "{}\n", line);
    for (const std::string& v : report.variants) {
        line = padded(v, name_width);
        for (std::size_t s = 0; s < report.sizes.size(); ++s) {
            const BenchRow* r = find(v, report.sizes[s]);
            line += padded(r ? cell_text(*r) : "", widths[s]);
        }
        while (!line.empty() && line.back() == ' ') line.pop_back();
        fmt::print(out, "{}\n", line);
    }

    // Which reference each size was checked against.
    std::vector<std::pair<std::string, std::string>> refs;  // reference, sizes
    for (const BenchSize& size : report.sizes) {
        for (const BenchRow* r : rows) {
            if (r->size == size && !r->reference.empty()) {
                auto it = std::find_if(refs.begin(), refs.end(),
                                       [&](const auto& p) { return p.first == r->reference; });
                if (it == refs.end()) refs.emplace_back(r->reference, size.label());
                else it->second += ", " + size.label();
                break;
            }
        }
    }
    if (!refs.empty()) {
        std::string text;
        for (const auto& [name, sizes] : refs) {
            text += fmt::format("{}{} ({})", text.empty() ? "" : "; ", name, sizes);
        }
        fmt::print(out, "checked against {}\n", text);
    }
}

// Each refusal reason once, with the variants that gave it.
void print_notes(std::FILE* out, const BenchReport& report) {
    std::vector<std::pair<std::string, std::vector<std::string>>> refusals;
    for (const BenchRow& r : report.rows) {
        if (r.status != RowStatus::refused) continue;
        auto it = std::find_if(refusals.begin(), refusals.end(),
                               [&](const auto& p) { return p.first == r.reason; });
        if (it == refusals.end()) {
            refusals.push_back({r.reason, {r.variant}});
        } else if (std::find(it->second.begin(), it->second.end(), r.variant) == it->second.end()) {
            it->second.push_back(r.variant);
        }
    }
    if (!refusals.empty()) fmt::print(out, "\n{} refused:\n", kRefusedCell);
    for (const auto& [reason, variants] : refusals) {
        fmt::print(out, "  {}: {}\n", fmt::join(variants, ", "), reason);
    }
    for (const BenchRow& r : report.rows) {
        if (r.status == RowStatus::wrong) {
            fmt::print(out, "WRONG: {} against {}: {}\n", case_name(r), r.reference, r.reason);
        } else if (r.status == RowStatus::error) {
            fmt::print(out, "ERROR: {}: {}\n", case_name(r), r.reason);
        }
    }
}

std::string csv_field(const std::string& text) {
    if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
    std::string quoted = "\"";
    for (const char c : text) {
        if (c == '"') quoted += '"';
        quoted += c;
    }
    return quoted + "\"";
}

}  // namespace

void print_bench_tables(std::FILE* stream, const BenchReport& report) {
    print_header(stream, report);
    for (const std::string& filter : report.filters) {
        for (const Depth depth : report.depths) print_table(stream, report, filter, depth);
    }
    print_notes(stream, report);
    for (const std::string& peer : report.peers) {
        fmt::print(stream, "{}: a peer, not a cudaconv variant: {}\n", peer,
                   peer == kOpenCvPeer ? "cv::filter2D, or cv::sepFilter2D for a rank-1 filter, "
                                         "on OpenCV's threads (those cpu runs on)"
                                       : "another library");
    }
}

namespace {

constexpr const char* kCsvHeader =
    "variant,filter,filter_width,filter_height,width,height,channels,depth,border,"
    "out_width,out_height,runs,median_us,min_us,max_us,mpix_per_s,gb_per_s,copy_share,"
    "status,reference,reason";

// The report's rows; with `device_column`, each ends with the device it
// was timed on (a CPU row's is empty).
std::string csv_rows(const BenchReport& report, bool device_column) {
    std::string csv;
    for (const BenchRow& r : report.rows) {
        std::string times = ",,,,,,";
        if (r.timed()) {
            times = fmt::format("{},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},", r.time.runs,
                                r.time.median_ms * 1e3, r.time.min_ms * 1e3, r.time.max_ms * 1e3,
                                r.mpix_per_s, r.gb_per_s);
            if (r.copy_share) times += fmt::format("{:.4f}", *r.copy_share);
        }
        std::string device;
        if (device_column) {
            device = r.uses_cuda ? fmt::format(",{}", report.context.device_index) : ",";
        }
        csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}{}\n", csv_field(r.variant),
                           csv_field(r.filter), r.filter_width, r.filter_height, r.size.width,
                           r.size.height, r.size.channels, depth_name(r.depth),
                           border_name(report.context.border), r.out_width, r.out_height, times,
                           status_name(r.status), csv_field(r.reference), csv_field(r.reason),
                           device);
    }
    return csv;
}

}  // namespace

std::string bench_csv(const BenchReport& report) {
    return std::string(kCsvHeader) + "\n" + csv_rows(report, false);
}

std::string bench_csv_devices(const std::vector<BenchReport>& reports) {
    std::string csv = std::string(kCsvHeader) + ",device\n";
    for (const BenchReport& report : reports) csv += csv_rows(report, true);
    return csv;
}

using Json = nlohmann::ordered_json;

nlohmann::ordered_json bench_json(const BenchReport& report) {
    const BenchContext& c = report.context;
    Json context = {
        {"tool", "cudaconv bench"},
        {"version", build_version()},
        {"date", c.date},
        {"device", c.device_name.empty() ? Json() : Json(c.device_name)},
        {"device_index", c.device_index >= 0 ? Json(c.device_index) : Json()},
        {"device_problem", c.device_problem},
        {"copy_gb_per_s", c.copy_gb_per_s ? Json(*c.copy_gb_per_s) : Json()},
        {"copy_bytes", c.copy_bytes},
        {"rotate_bytes", c.rotate_bytes},
        {"warmup", c.warmup},
        {"repeat", c.repeat},
        {"cpu_budget_s", c.cpu_budget_s},
        {"verify", c.verify},
        {"timing", c.device_timing ? "device" : "launch"},
        {"border", border_name(c.border)},
        {"seeds", {{"image", kBenchImageSeed}, {"filter", kBenchFilterSeed}}},
    };
    Json results = Json::array();
    for (const BenchRow& r : report.rows) {
        Json row = {
            {"variant", r.variant},
            {"path", r.path.empty() ? Json() : Json(r.path)},
            {"uses_cuda", r.uses_cuda},
            {"peer", r.peer},
            {"filter",
             {{"spec", r.filter}, {"width", r.filter_width}, {"height", r.filter_height}}},
            {"image",
             {{"width", r.size.width},
              {"height", r.size.height},
              {"channels", r.size.channels},
              {"depth", depth_name(r.depth)}}},
            {"output", {{"width", r.out_width}, {"height", r.out_height}}},
            {"status", status_name(r.status)},
            {"reason", r.reason},
            {"reference", r.reference},
        };
        const Json none;
        row["runs"] = r.timed() ? Json(r.time.runs) : none;
        row["median_us"] = r.timed() ? Json(r.time.median_ms * 1e3) : none;
        row["min_us"] = r.timed() ? Json(r.time.min_ms * 1e3) : none;
        row["max_us"] = r.timed() ? Json(r.time.max_ms * 1e3) : none;
        row["mpix_per_s"] = r.timed() ? Json(r.mpix_per_s) : none;
        row["gb_per_s"] = r.timed() ? Json(r.gb_per_s) : none;
        row["copy_share"] = r.timed() && r.copy_share ? Json(*r.copy_share) : none;
        if (r.verdict) {
            const Verdict& v = *r.verdict;
            row["verification"] = {
                {"tolerance", v.tolerance},
                {"failures", v.failures},
                {"samples", v.samples},
                {"worst",
                 {{"x", v.worst.x},
                  {"y", v.worst.y},
                  {"channel", v.worst.channel},
                  {"expected", v.worst.expected},
                  {"actual", v.worst.actual},
                  {"error", v.worst.error}}},
            };
        }
        results.push_back(std::move(row));
    }
    return {{"context", std::move(context)}, {"results", std::move(results)}};
}

nlohmann::ordered_json bench_json_devices(const std::vector<BenchReport>& reports) {
    Json devices = Json::array();
    for (const BenchReport& report : reports) devices.push_back(bench_json(report));
    return {{"devices", std::move(devices)}};
}

}  // namespace cudaconv
