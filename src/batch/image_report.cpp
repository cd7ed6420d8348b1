#include "batch/image_report.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "base/printable.hpp"

namespace cudaconv {

FilterStats filter_stats(const ImageReport& r) {
    FilterStats s;
    std::vector<double> runs = r.run.filter_ms;
    if (runs.empty()) return s;
    std::sort(runs.begin(), runs.end());
    const std::size_t n = runs.size();
    s.median_ms = n % 2 ? runs[n / 2] : 0.5 * (runs[n / 2 - 1] + runs[n / 2]);
    s.min_ms = runs.front();
    s.max_ms = runs.back();
    if (s.median_ms > 0.0) {
        const double seconds = s.median_ms * 1e-3;
        const double bytes = static_cast<double>(r.width * r.height) * r.channels *
                                 static_cast<double>(depth_bytes(r.in_depth)) +
                             static_cast<double>(r.out_width * r.out_height) *
                                 (r.out_channels > 0 ? r.out_channels : r.channels) *
                                 static_cast<double>(depth_bytes(r.out_depth));
        s.mpix_per_s = static_cast<double>(r.out_width * r.out_height) / seconds * 1e-6;
        s.gb_per_s = bytes / seconds * 1e-9;
    }
    return s;
}

void print_timings(std::FILE* stream, const ImageReport& r) {
    const FilterStats s = filter_stats(r);
    const bool on_gpu = r.run.upload_ms > 0.0 || r.run.download_ms > 0.0;
    auto stage = [&](const char* name, double ms, bool applies, const std::string& by = {}) {
        if (applies)
            fmt::print(stream, "  {:<9}{:>10.3f} ms{}\n", name, ms, by.empty() ? "" : "  " + by);
        else fmt::print(stream, "  {:<9}{:>10} \n", name, "-");
    };
    const std::string variant = r.run.path.empty() ? r.variant
                                                   : fmt::format("{} ({})", r.variant, r.run.path);
    if (r.out_channels > 0) {  // a layer: its label says the kernel's size
        fmt::print(stream, "{} -> {}: {}x{} {}ch -> {}x{} {}ch {}, {}, {}\n", printable(r.input),
                   printable(r.output), r.width, r.height, r.channels, r.out_width, r.out_height,
                   r.out_channels, depth_name(r.out_depth), printable_spec(r.filter), variant);
    } else {
        fmt::print(stream, "{} -> {}: {}x{} {}ch {} -> {}, {} {}x{}, {}\n", printable(r.input),
                   printable(r.output), r.width, r.height, r.channels, depth_name(r.in_depth),
                   depth_name(r.out_depth), printable_spec(r.filter), r.filter_width,
                   r.filter_height, variant);
    }
    stage("decode", r.decode_ms, true, r.decoder);
    stage("upload", r.run.upload_ms, on_gpu);
    fmt::print(stream, "  {:<9}{:>10.3f} ms", "filter", s.median_ms);
    if (r.run.filter_ms.size() > 1) {
        fmt::print(stream, "  median of {}, min {:.3f}, max {:.3f}", r.run.filter_ms.size(),
                   s.min_ms, s.max_ms);
    }
    fmt::print(stream, "  ({:.1f} Mpix/s, {:.2f} GB/s)\n", s.mpix_per_s, s.gb_per_s);
    if (r.run.png_rows_ms > 0.0) {
        stage("png rows", r.run.png_rows_ms, true);  // compressed on the device
    } else if (r.run.gpu_jpeg_ms > 0.0) {
        stage("gpu jpeg", r.run.gpu_jpeg_ms, true);  // encoded on the device
    } else {
        stage("download", r.run.download_ms, on_gpu);
    }
    stage("encode", r.encode_ms, true, r.encoder);
    stage("total", r.total_ms, true);
}

nlohmann::json to_json(const ImageReport& r) {
    const FilterStats s = filter_stats(r);
    nlohmann::json line = {
        {"input", r.input},
        {"output", r.output},
        {"variant", r.variant},
        {"path", r.run.path.empty() ? nlohmann::json() : nlohmann::json(r.run.path)},
        {"device", r.device >= 0 ? nlohmann::json(r.device) : nlohmann::json()},
        {"decoder", r.decoder},
        {"encoder", r.encoder},
        {"filter", {{"spec", r.filter}, {"width", r.filter_width}, {"height", r.filter_height}}},
        {"image",
         {{"width", r.width},
          {"height", r.height},
          {"channels", r.channels},
          {"depth", depth_name(r.in_depth)}}},
        {"output_image",
         {{"width", r.out_width},
          {"height", r.out_height},
          {"channels", r.out_channels > 0 ? r.out_channels : r.channels},
          {"depth", depth_name(r.out_depth)}}},
        {"timings_ms",
         {{"decode", r.decode_ms},
          {"upload", r.run.upload_ms},
          {"filter", s.median_ms},
          {"download", r.run.download_ms},
          {"png_rows", r.run.png_rows_ms},
          {"gpu_jpeg", r.run.gpu_jpeg_ms},
          {"encode", r.encode_ms},
          {"total", r.total_ms},
          {"run", r.run_ms}}},
        {"filter_runs",
         {{"count", r.run.filter_ms.size()},
          {"median_ms", s.median_ms},
          {"min_ms", s.min_ms},
          {"max_ms", s.max_ms},
          {"mpix_per_s", s.mpix_per_s},
          {"gb_per_s", s.gb_per_s},
          {"all_ms", r.run.filter_ms}}},
    };
    if (!r.outputs.empty()) line["outputs"] = r.outputs;
    return line;
}

}  // namespace cudaconv
