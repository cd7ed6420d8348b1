#include "cli/filter_options.hpp"

#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/errors.hpp"
#include "batch/devices.hpp"
#include "cli/case_insensitive.hpp"
#include "cli/number_options.hpp"
#include "core/jpeg_settings.hpp"

namespace cudaconv {
namespace {

// --pinned-slots' largest value, --in-flight's: a slot holds one image
// bound for the GPU, and a batch holds no more images than that at once.
constexpr int kMaxPinnedSlots = 65536;

}  // namespace

std::string check_options_without_filter(const FilterOptions& o) {
    const FilterOptions defaults;
    std::vector<std::string> refused;
    auto refuse_if = [&refused](bool given, const char* name) {
        if (given) refused.emplace_back(name);
    };
    refuse_if(o.border != defaults.border, "--border");
    refuse_if(o.border_value.has_value(), "--border-value");
    refuse_if(o.anchor != defaults.anchor, "--anchor");
    refuse_if(o.flip, "--flip");
    refuse_if(o.scale != defaults.scale, "--scale");
    refuse_if(o.delta != defaults.delta, "--delta");
    refuse_if(o.take_abs, "--abs");
    refuse_if(o.normalize, "--normalize");
    refuse_if(o.depth != defaults.depth, "--depth");
    refuse_if(o.alpha != defaults.alpha, "--alpha");
    refuse_if(!o.combine.empty(), "--combine");
    if (!refused.empty()) {
        throw UsageError(fmt::format("-f none writes the image as decoded; {} need{} a filter "
                                     "(-f identity applies {})",
                                     fmt::join(refused, ", "), refused.size() == 1 ? "s" : "",
                                     refused.size() == 1 ? "it" : "them"));
    }
    std::vector<std::string> ignored;
    if (o.kernel != defaults.kernel) ignored.push_back("-k " + o.kernel);
    if (o.repeat != defaults.repeat) ignored.emplace_back("--repeat");
    if (o.warmup != defaults.warmup) ignored.emplace_back("--warmup");
    if (ignored.empty()) return "";
    return fmt::format("-f none runs no filter: {} ignored", fmt::join(ignored, ", "));
}

void add_filter_options(CLI::App& app, FilterOptions& o) {
    app.add_option("inputs", o.inputs,
                   "Input images (JPEG, PNG, TIFF, ...), folders of them, quoted patterns "
                   "('*.jpg'); - reads stdin");
    app.add_flag("-r,--recursive", o.recursive,
                 "Folders: their subfolders too ({dir} mirrors them)");
    app.add_option("--from", o.from, "Read more input paths from FILE, one a line (- for stdin)");
    app.add_option("--from-root", o.from_root,
                   "The folder --from's paths lie under: they keep their folders below it, for "
                   "{dir} and -o DIR/, as a folder argument's files do");
    app.add_option("-f,--filter", o.filter_specs,
                   "Filter: a name (edge, gaussian:5, ...), WxH:v,v,... or a file "
                   "(see 'cudaconv list filters'); none: decode and encode only. Repeated: "
                   "a chain, applied in order")
        ->allow_extra_args(false);
    app.add_option("--combine", o.combine,
                   "Several -f as a bank over the input, their responses combined: magnitude "
                   "(a gradient's length), max, sum, or stack (one channel a filter, to .npy, "
                   "or one file a filter with {filter} in -o); "
                   "without it, several -f are a chain")
        ->transform(ascii_lower);
    app.add_option(
           "--weights", o.weights,
           "A CNN's convolution layer in place of -f: weights (k_h, k_w, C_in, C_out) "
           "float32 .npy (Keras's HWIO); the output is an (H, W, C_out) .npy, or one image a "
           "channel")
        ->option_text("W.npy");
    app.add_option("--bias", o.bias, "The layer's bias, (C_out,) float32 .npy (default: zeros)")
        ->option_text("B.npy");
    app.add_option("--activation", o.activation, "After the layer's bias: none or relu")
        ->transform(ascii_lower)
        ->check(CLI::IsMember({"none", "relu"}))
        ->capture_default_str();
    app.add_option("--pool", o.pool,
                   "After the activation: none, or max2 (the maximum of each 2x2 block; even "
                   "sizes only)")
        ->transform(ascii_lower)
        ->check(CLI::IsMember({"none", "max2"}))
        ->capture_default_str();
    app.add_flag("--allow-tf32", o.allow_tf32,
                 "Let a GPU layer round its inputs to TF32 on tensor cores (10-bit mantissa; "
                 "default: float32 products)");
    app.add_option("-k,--kernel", o.kernel,
                   "Variant to run, or auto, in any case (see 'cudaconv list kernels')")
        ->transform(ascii_lower)
        ->capture_default_str();
    app.add_option("-o,--output", o.output,
                   "Output file, folder (ends in / or exists; mirrors -r trees), template with "
                   "{stem} {ext} {filter} {kernel} {dir} ({channel}: a layer's, one image a "
                   "channel), or - for stdout")
        ->required();
    app.add_flag("--skip-existing", o.skip_existing,
                 "Leave outputs that exist and skip their inputs (default: refuse to start)");
    app.add_flag("--overwrite", o.overwrite,
                 "Replace outputs that exist (default: refuse to start)");
    app.add_flag("--no-auto-orient", o.no_auto_orient,
                 "Keep a JPEG's pixels as stored (default: turned upright by its EXIF "
                 "orientation, as cameras record it)");
    app.add_flag("--strip", o.strip,
                 "Leave the input's EXIF block and ICC colour profile out of the output "
                 "(default: kept in JPEG and PNG outputs, and in TIFF where --version names "
                 "Exiv2)");
    app.add_option("--shard", o.shard,
                   "Do part K of N (0 <= K < N) of the inputs, split by a hash of their paths: "
                   "N runs do each input once")
        ->option_text("K/N");
    app.add_option("-j,--jobs", o.jobs, "Decode/encode threads (default: one per core)")
        ->check(integer_from(1, 1024));
    app.add_option(
           "--in-flight", o.in_flight,
           "Images read and not yet written, at most (default: -j plus half as many, "
           "at least 2, and 16 more a GPU thread when the GPU decodes JPEGs); bounds memory")
        ->check(integer_from(1, 65536));
    app.add_option(
        "--format", o.format,
        "Format of stdout (-o -) and of stdin's {ext} (png, jpg, tif, ...); default png");
    app.add_option("--border", o.border,
                   "reflect101 | reflect | replicate | constant | wrap | valid (and aliases); "
                   "a layer's default is zero (padding 'same')")
        ->each([&o](const std::string&) { o.border_given = true; })
        ->capture_default_str();
    app.add_option("--border-value", o.border_value,
                   "Value outside the image for --border constant (default 0)");
    app.add_option("--anchor", o.anchor,
                   "Tap X,Y that lands on the output pixel (default: centre)");
    app.add_flag("--flip", o.flip, "True convolution: rotate the filter by 180 degrees");
    app.add_option("--scale", o.scale, "Multiply the sum by this")->capture_default_str();
    app.add_option("--delta", o.delta, "Then add this")->capture_default_str();
    app.add_flag("--abs", o.take_abs, "Then take the absolute value");
    app.add_flag("--normalize", o.normalize, "Divide the taps by their sum (when not 0)");
    app.add_option("--depth", o.depth, "Output depth")
        ->check(CLI::IsMember({"same", "u8", "u16", "f32"}))
        ->capture_default_str();
    app.add_option("--alpha", o.alpha,
                   "A 4th channel: keep it unchanged, filter it too, or premultiply (colour "
                   "weighted by alpha, for blurs of images with transparency)")
        ->check(CLI::IsMember({"keep", "filter", "premultiply"}))
        ->capture_default_str();
    app.add_flag("--timings", o.timings, "Print decode, upload, filter, download, encode, total");
    app.add_option("--repeat", o.repeat, "Time the filter this many times (median, min, max)")
        ->check(integer_from(1, 1000000))
        ->capture_default_str();
    app.add_option("--warmup", o.warmup, "Untimed filter runs first")
        ->check(integer_from(0, 1000000))
        ->capture_default_str();
    app.add_option("--json", o.json_path,
                   "Write timings as JSON lines to FILE (an output: refused if it exists, unless "
                   "--overwrite), or - for stdout");
    app.add_option("--jpeg-quality", o.encode.jpeg.quality, "JPEG quality")
        ->check(integer_from(0, 100))
        ->capture_default_str();
    app.add_option_function<std::string>(
           "--jpeg-sampling",
           [&o](const std::string& text) { o.encode.jpeg.sampling = *parse_chroma_sampling(text); },
           "JPEG chroma sampling: 420 (half the colour resolution each way), 422, or 444 (full; "
           "sharper colour edges, larger files)")
        ->check(CLI::IsMember({"420", "422", "444"}))
        ->default_str("420");
    app.add_option("--background", o.background,
                   "What a JPEG output's alpha is flattened onto: white, black or #RRGGBB "
                   "(RGBA and 16-bit images are converted for JPEG)")
        ->capture_default_str();
    app.add_option("--png-level", o.encode.png_level, "PNG compression level (1 is fast)")
        ->check(integer_from(0, 9))
        ->capture_default_str();
    app.add_option("--encoder", o.encoder,
                   "Where a PNG output's rows are compressed: auto (on the GPU when a CUDA "
                   "variant filtered the image), cpu, or gpu (refused where it cannot be)")
        ->check(CLI::IsMember({"auto", "cpu", "gpu"}))
        ->capture_default_str();
    app.add_option("--decoder", o.decoder,
                   "Where JPEG inputs are decoded: auto (on the GPU for a batch of 400 images or "
                   "more that a CUDA variant filters, where nvJPEG is present), cpu, or gpu "
                   "(refused where it cannot be)")
        ->check(CLI::IsMember({"auto", "cpu", "gpu"}))
        ->capture_default_str();
    app.add_option("--pinned-slots", o.pinned_slots,
                   "Page-locked upload slots of a GPU batch, 0 for none (default: 3 for 16 "
                   "images or more, else 0)")
        ->check(integer_from(0, kMaxPinnedSlots));
    app.add_option("--devices", o.devices,
                   "GPUs a batch filters on: all, a count N (the first N), or device numbers "
                   "0,2; images go to whichever is free next (default: the first)")
        ->option_text("all|N|LIST");
    app.add_option("--gpu-threads", o.gpu_threads,
                   "GPU threads a device in a batch, 1 or 2, each with its own buffers (default: "
                   "2 on a device of 8 GB or more; 1 where JPEGs are decoded on the GPU and "
                   "written as other than PNG)")
        ->check(integer_from(1, static_cast<int>(kGpuThreadsPerDevice)));
    add_max_pixels_option(app, o.max_pixels);
}

void add_max_pixels_option(CLI::App& app, std::uint64_t& max_pixels) {
    app.add_option("--max-pixels", max_pixels,
                   "Refuse an input of more pixels than this (0: no limit), told from its header "
                   "before decoding where the header says")
        ->check(non_negative_integer())
        ->capture_default_str();
}

}  // namespace cudaconv
