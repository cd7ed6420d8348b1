#include "cli/layer_command.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <opencv2/core.hpp>
#include <spdlog/spdlog.h>

#include "base/errors.hpp"
#include "batch/image_report.hpp"
#include "batch/interrupt.hpp"
#include "batch/json_lines.hpp"
#include "batch/plan.hpp"
#include "batch/progress.hpp"
#include "batch/shard.hpp"
#include "cli/terminal.hpp"
#include "core/conv_layer.hpp"
#include "io/image_io.hpp"
#include "io/inputs.hpp"
#include "io/layer_files.hpp"
#include "kernels/runtime/device_info.hpp"
#include "variants/layer_registry.hpp"
#include "variants/registry.hpp"

namespace cudaconv {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::string display(const std::string& input) { return input == kStdStream ? "<stdin>" : input; }

// The token of -o that names one image a layer's output channel.
constexpr std::string_view kChannelField = "{channel}";

// The main job's options that shape or encode a filtered image: a layer
// has no use for them, so each is refused rather than ignored. Those that
// encode an image (--depth, the JPEG and PNG options) serve one image a
// channel ({channel} in -o).
void refuse_filter_options(const FilterOptions& o, bool per_channel) {
    const FilterOptions defaults;
    std::vector<std::string> refused;
    const auto refuse_if = [&refused](bool given, const char* name) {
        if (given) refused.emplace_back(name);
    };
    refuse_if(!o.filter_specs.empty(), "-f");
    refuse_if(!o.combine.empty(), "--combine");
    refuse_if(o.anchor != defaults.anchor, "--anchor");
    refuse_if(o.flip, "--flip");
    refuse_if(o.scale != defaults.scale, "--scale");
    refuse_if(o.delta != defaults.delta, "--delta");
    refuse_if(o.take_abs, "--abs");
    refuse_if(o.normalize, "--normalize");
    refuse_if(!per_channel && o.depth != defaults.depth && o.depth != "f32", "--depth");
    refuse_if(o.alpha != defaults.alpha, "--alpha");
    refuse_if(!per_channel && o.encode.jpeg.quality != defaults.encode.jpeg.quality,
              "--jpeg-quality");
    refuse_if(!per_channel && o.encode.jpeg.sampling != defaults.encode.jpeg.sampling,
              "--jpeg-sampling");
    refuse_if(!per_channel && o.encode.png_level != defaults.encode.png_level, "--png-level");
    refuse_if(o.background != defaults.background, "--background");
    refuse_if(o.encoder != defaults.encoder, "--encoder");
    refuse_if(o.decoder != defaults.decoder, "--decoder");
    refuse_if(o.pinned_slots.has_value(), "--pinned-slots");
    refuse_if(o.gpu_threads.has_value(), "--gpu-threads");
    refuse_if(o.in_flight != defaults.in_flight, "--in-flight");
    refuse_if(o.jobs != defaults.jobs, "-j");
    refuse_if(o.strip, "--strip");
    if (o.devices) {
        throw UsageError(
            "--devices: a layer (--weights) runs its inputs one after another on one GPU, the "
            "first (CUDA_VISIBLE_DEVICES=N picks another; --shard splits the inputs among "
            "processes, one a GPU)");
    }
    if (!refused.empty()) {
        throw UsageError(fmt::format(
            "--weights runs a convolution layer, which writes float32 .npy (or one image a "
            "channel, {{channel}} in -o); {} appl{} to -f's image filters only",
            fmt::join(refused, ", "), refused.size() == 1 ? "ies" : "y"));
    }
}

ConvLayer layer_from_options(const FilterOptions& o) {
    ConvLayer layer = load_conv_layer(o.weights, o.bias);
    layer.activation = *parse_activation(o.activation);
    layer.pool = o.pool == "max2";
    layer.allow_tf32 = o.allow_tf32;
    bool forces_zero = false;  // --border zero
    if (o.border_given) {
        const std::optional<BorderMode> border = parse_border(o.border, &forces_zero);
        if (!border) {
            throw UsageError(fmt::format("--border \"{}\": unknown border mode", o.border));
        }
        layer.border = *border;
    }
    // As the filter command takes it (cli/conv_params.cpp): finite, and
    // ignored, with a warning, but for --border constant.
    if (o.border_value) {
        if (!std::isfinite(*o.border_value) ||
            std::abs(*o.border_value) > std::numeric_limits<float>::max()) {
            throw UsageError("--border-value must be a finite float32 number");
        }
        if (layer.border != BorderMode::constant || forces_zero) {
            spdlog::warn("--border-value {} is ignored: it applies to --border constant only",
                         *o.border_value);
        } else {
            layer.border_value = static_cast<float>(*o.border_value);
        }
    }
    return layer;
}

// -k auto's rule: the cpu variant's multiply-adds a second a core (a 3x3
// 64->64 layer on 112x112, 4.6e8 of them, took 8.3 ms on 2 cores of the
// build machine with AVX-512: 2.8e10 a core; less assumed for older
// vectors), against what a process pays to start CUDA and cuDNN and
// search cuDNN's algorithms (0.4-0.6 s a VGG16 layer on the H100 machine,
// `cudaconv -v`'s total less the layer).
constexpr double kCpuMultiplyAddsPerCoreSecond = 1e10;
constexpr double kGpuStartSeconds = 0.5;
// And between cudnn and mma, each one's timed runs on the first input of a
// size: enough for a median, few next to a batch.
constexpr int kAutoTimedRuns = 5;

class LayerCommand {
public:
    explicit LayerCommand(const FilterOptions& o)
        : options_(o), per_channel_(o.output.find(kChannelField) != std::string::npos) {
        refuse_filter_options(o, per_channel_);
        layer_ = layer_from_options(o);
        variants_ = make_layer_variants();
        if (o.kernel != "auto") chosen_ = named_variant(o.kernel);
        refuse_image_data_to_terminal(o.output, stdout_is_terminal());
        if (o.inputs.empty() && o.from.empty()) {
            throw UsageError("no input: name files, folders or patterns, or --from FILE|-");
        }
        if (!o.json_path.empty() && o.json_path == kStdStream && o.output == kStdStream) {
            throw UsageError("--json - and -o - would both write to stdout");
        }
        existing_ = existing_outputs_policy(o.skip_existing, o.overwrite);
        std::optional<Shard> shard;
        if (!o.shard.empty()) shard = parse_shard(o.shard);
        shard_text_ = shard ? shard->text() : "";
        const std::vector<InputFile> inputs =
            expand_inputs({o.inputs, o.recursive, o.from, o.from_root});
        PlanRequest request{{o.output,
                             o.format.empty() && o.output == kStdStream ? "npy" : o.format, label(),
                             chosen_ ? o.kernel : "auto", inputs.size() > 1, ""},
                            existing_,
                            std::nullopt,
                            o.json_path,
                            {},
                            {o.weights},
                            {},
                            shard};
        if (!o.bias.empty()) request.other_inputs.push_back(o.bias);
        if (!o.from.empty() && o.from != kStdStream) request.other_inputs.push_back(o.from);
        if (per_channel_) {
            plan_channels(inputs, request);
        } else {
            request.check_outputs = [](const std::vector<PlannedImage>& planned) {
                for (const PlannedImage& p : planned) {
                    if (p.target.extension == ".npy") continue;
                    throw UsageError(fmt::format(
                        "{}: a layer writes an (H, W, C_out) float32 .npy, not {} (or one image "
                        "a channel: put {{channel}} in -o)",
                        p.target.path == kStdStream ? "-o -" : p.target.path,
                        p.target.extension.empty() ? "a file without an extension"
                                                   : p.target.extension));
                }
            };
            plan_ = plan_outputs(inputs, request);
        }
        check_headers();
        read_options_.max_pixels = o.max_pixels;
        read_options_.auto_orient = !o.no_auto_orient;
    }

    int run() {
        std::optional<JsonLines> json;
        if (!options_.json_path.empty()) {
            json.emplace(options_.json_path, existing_ == ExistingOutputs::overwrite);
        }
        std::size_t work = 0;
        for (const PlannedImage& p : plan_) work += p.skip ? 0 : 1;
        const bool bar = progress_bar_wanted({stderr_is_terminal(), stdout_is_terminal(),
                                              options_.json_path == kStdStream,
                                              !spdlog::should_log(spdlog::level::info), work});
        BatchProgress progress(
            {plan_.size(), bar, options_.timings, json ? &*json : nullptr, shard_text_, {}});
        const GracefulStop stop;
        read_options_.cancelled = [&stop] { return stop.requested(); };
        for (std::size_t i = 0; i < plan_.size(); ++i) {
            const PlannedImage& image = plan_[i];
            if (image.skip) {
                progress.skipped(display(image.source.path), image.target.path);
                continue;
            }
            if (stop.requested()) break;
            try {
                progress.done(run_one(image, i, stop), i);
            } catch (const UsageError&) {
                throw;
            } catch (const Cancelled&) {
                break;
            } catch (const std::bad_alloc&) {
                progress.failed(display(image.source.path),
                                display(image.source.path) + ": out of memory");
            } catch (const std::exception& e) {
                progress.failed(display(image.source.path), e.what());
            }
        }
        const int signal_number = stop.signal_number();
        const BatchSummary summary = progress.finish(signal_number);
        if (signal_number != 0) return kExitSignalBase + signal_number;
        return summary.failed || progress.json_failed() ? kExitWorkFailed : kExitOk;
    }

private:
    std::string label() const { return std::filesystem::path(options_.weights).stem().string(); }

    LayerVariant* named_variant(const std::string& name) {
        for (const auto& v : variants_) {
            if (v->name() != name) continue;
            if (const std::string why = v->refusal(layer_); !why.empty()) {
                throw UsageError(fmt::format("-k {} cannot run this layer: {}", name, why));
            }
            return v.get();
        }
        std::vector<std::string> names;
        for (const auto& v : variants_) names.emplace_back(v->name());
        throw UsageError(
            fmt::format("-k {}: {} (a layer runs on {}, or auto)", name,
                        find_backend(name) ? "an image filter's variant" : "unknown variant",
                        fmt::join(names, ", ")));
    }

    LayerVariant* variant(const std::string& name) const {
        for (const auto& v : variants_) {
            if (v->name() == name) return v.get();
        }
        return nullptr;
    }

    // -k auto: the CPU where it would finish every run of every input
    // before the GPU had started (by the measured rates above); else, of
    // cudnn and mma, the one that can run, or where both can, the faster on
    // this input's size (each timed on the input, chosen again for each new
    // size); else cpu. Once a size has gone to the GPU, the CPU is not
    // chosen again: its start-up is paid.
    LayerVariant* choose(const Tensor3& input, const LayerGeometry& g, const GracefulStop& stop) {
        if (chosen_) return chosen_;
        const std::pair<std::int64_t, std::int64_t> size{input.height, input.width};
        if (const auto known = auto_by_size_.find(size); known != auto_by_size_.end()) {
            return known->second;
        }
        const double cores = std::max(1, cv::getNumThreads());
        // Every input, each run of it (--warmup and --repeat).
        const double runs =
            static_cast<double>(plan_.size()) * std::max(1, options_.warmup + options_.repeat);
        const double cpu_s =
            layer_multiply_adds(layer_, g) * runs / (kCpuMultiplyAddsPerCoreSecond * cores);
        LayerVariant* pick = variant("cpu");
        if (gpu_started_ || cpu_s > kGpuStartSeconds) {
            std::vector<LayerVariant*> gpus;
            for (const char* name : {"cudnn", "mma"}) {
                LayerVariant* v = variant(name);
                if (const std::string why = v->refusal(layer_); why.empty()) {
                    gpus.push_back(v);
                } else {
                    spdlog::debug("auto: {} cannot run ({})", name, why);
                }
            }
            if (gpus.size() == 1) pick = gpus.front();
            if (gpus.size() > 1) {
                LayerVariant* faster = fastest(gpus, input, g, stop);
                // A timing cut short by a stop decides nothing for later.
                if (stop.requested()) return faster ? faster : gpus.front();
                if (faster) pick = faster;
            }
        }
        spdlog::debug("auto: {} for {}x{} (the cpu variant would take about {:.2f} s)",
                      pick->name(), input.width, input.height, cpu_s);
        gpu_started_ = gpu_started_ || pick->uses_cuda();
        auto_by_size_[size] = pick;
        return pick;
    }

    // Of `candidates`, the one whose layer takes least time on `input`:
    // the median of kAutoTimedRuns timed runs after one untimed (cudnn's own
    // algorithm search happens in the first). One that fails is left out,
    // saying why at -v; nullptr where none ran (all failed, or a stop).
    LayerVariant* fastest(const std::vector<LayerVariant*>& candidates, const Tensor3& input,
                          const LayerGeometry& g, const GracefulStop& stop) {
        Tensor3 scratch(g.out_height, g.out_width, layer_.out_channels);
        LayerVariant* best = nullptr;
        double best_ms = std::numeric_limits<double>::infinity();
        for (LayerVariant* v : candidates) {
            if (stop.requested()) break;
            LayerTimings t;
            try {
                prepare(v);
                t = v->run(input, scratch, 1, kAutoTimedRuns, [&stop] { return stop.requested(); });
            } catch (const std::exception& e) {
                spdlog::debug("auto: {} failed while timed ({}); left out", v->name(), e.what());
                continue;
            }
            if (t.layer_ms.empty()) continue;  // stopped
            std::sort(t.layer_ms.begin(), t.layer_ms.end());
            const double ms = t.layer_ms[t.layer_ms.size() / 2];
            spdlog::debug("auto: {} ({}) takes {:.3f} ms", v->name(), t.path, ms);
            if (ms < best_ms) {
                best = v;
                best_ms = ms;
            }
        }
        return best;
    }

    // Gives the layer to `v` once: it uploads or packs the weights.
    void prepare(LayerVariant* v) {
        if (std::find(prepared_.begin(), prepared_.end(), v) != prepared_.end()) return;
        v->prepare(layer_);
        prepared_.push_back(v);
    }

    // One image an output channel: -o's {channel} the channel's number
    // (zero-padded to C_out's digits, io/output_path.hpp), planned as one
    // output a channel, each checked against the others and the inputs as any plan
    // is, and each channel's format against --depth (default f32). An input
    // is skipped (--skip-existing) when all its channels' images exist.
    void plan_channels(const std::vector<InputFile>& inputs, PlanRequest request) {
        if (options_.output == kStdStream) throw UsageError("{channel} names files, not -o -");
        depth_ = options_.depth == "same" ? Depth::f32 : *parse_depth(options_.depth);
        request.out_depth = depth_;
        const int digits = static_cast<int>(std::to_string(layer_.out_channels - 1).size());
        plan_ = plan_parts(
            inputs, request, static_cast<std::size_t>(layer_.out_channels),
            [&](OutputRequest& output, std::size_t c) {
                output.channel = fmt::format("{:0{}}", c, digits);
            },
            channel_targets_);
    }

    // Each input whose header tells its shape, against the layer: exit 2
    // before any input is read.
    void check_headers() const {
        for (const PlannedImage& p : plan_) {
            if (p.skip) continue;
            const TensorShape shape = probe_layer_input(p.source.path);
            if (shape.channels == 0) continue;  // reading it will tell
            try {
                layer_geometry(layer_, shape.height, shape.width, shape.channels);
            } catch (const std::invalid_argument& e) {
                throw UsageError(fmt::format("{}: {}", display(p.source.path), e.what()));
            }
        }
    }

    // Each channel of `output` as a one-channel image at `depth_` (rounded
    // and saturated for u8 and u16), to its target ("" where it exists and
    // --skip-existing keeps it).
    void write_channels(const Tensor3& output, const std::vector<OutputTarget>& targets) const {
        const int h = static_cast<int>(output.height), w = static_cast<int>(output.width);
        cv::Mat plane(h, w, CV_32FC1);
        std::vector<std::string> written;
        try {
            for (std::size_t c = 0; c < targets.size(); ++c) {
                if (targets[c].path.empty()) continue;
                for (int y = 0; y < h; ++y) {
                    auto* row = plane.ptr<float>(y);
                    for (int x = 0; x < w; ++x) row[x] = output.pixel(y, x)[c];
                }
                cv::Mat image;
                plane.convertTo(image, cv_type_of(depth_, 1));
                write_file_atomically(
                    targets[c].path,
                    encode_image(image, targets[c].extension, options_.encode, targets[c].path));
                written.push_back(targets[c].path);
            }
        } catch (...) {
            // An input's channels are written whole or not at all.
            for (const std::string& path : written) std::remove(path.c_str());
            throw;
        }
    }

    ImageReport run_one(const PlannedImage& image, std::size_t index, const GracefulStop& stop) {
        ImageReport report;
        report.started = Clock::now();
        report.input = display(image.source.path);
        report.output = image.target.path == kStdStream ? "<stdout>" : image.target.path;
        const Tensor3 input = read_layer_input(image.source.path, read_options_);
        report.decode_ms = ms_since(report.started);
        LayerGeometry g;
        try {
            g = layer_geometry(layer_, input.height, input.width, input.channels);
        } catch (const std::invalid_argument& e) {
            throw WorkError(report.input + ": " + e.what());
        }
        LayerVariant* v = choose(input, g, stop);
        if (stop.requested()) throw Cancelled(report.input + ": stopped");
        prepare(v);
        Tensor3 output(g.out_height, g.out_width, layer_.out_channels);
        const auto run_start = Clock::now();
        const LayerTimings t = v->run(input, output, options_.warmup, options_.repeat,
                                      [&stop] { return stop.requested(); });
        report.run_ms = ms_since(run_start);
        // Stopped by a signal: the runs ended early, and the image is not
        // written (docs/SPEC.md, "Exit codes").
        if (stop.requested()) throw Cancelled(report.input + ": stopped");
        const auto encode_start = Clock::now();
        if (channel_targets_.empty()) {
            write_file_atomically(image.target.path, encode_tensor(output));
        } else {
            write_channels(output, channel_targets_[index]);
        }
        report.encode_ms = ms_since(encode_start);
        report.total_ms = ms_since(report.started);
        report.variant = std::string(v->name());
        if (v->uses_cuda() && !probe_devices().devices.empty()) {
            report.device = probe_devices().devices.front().index;  // a layer's one device
        }
        report.decoder = "cpu";
        report.encoder = "cpu";
        report.filter = layer_label(layer_);
        report.filter_width = layer_.kernel_width;
        report.filter_height = layer_.kernel_height;
        report.width = input.width;
        report.height = input.height;
        report.channels = static_cast<int>(input.channels);
        report.out_width = output.width;
        report.out_height = output.height;
        report.out_channels = static_cast<int>(output.channels);
        report.in_depth = Depth::f32;
        report.out_depth = depth_;
        report.run.upload_ms = t.upload_ms;
        report.run.download_ms = t.download_ms;
        report.run.filter_ms = t.layer_ms;
        report.run.path = t.path;
        return report;
    }

    const FilterOptions& options_;
    const bool per_channel_;
    ConvLayer layer_;
    std::vector<std::unique_ptr<LayerVariant>> variants_;
    LayerVariant* chosen_ = nullptr;       // -k's, or auto's once it has chosen
    std::vector<LayerVariant*> prepared_;  // the variants layer_ was given to
    bool gpu_started_ = false;             // -k auto has run a size on cudnn or mma
    // -k auto's choice for each input size (height, width) met so far.
    std::map<std::pair<std::int64_t, std::int64_t>, LayerVariant*> auto_by_size_;
    ExistingOutputs existing_ = ExistingOutputs::refuse;
    std::string shard_text_;
    std::vector<PlannedImage> plan_;
    // With {channel} in -o (per_channel_): each input's image a channel, in
    // channel order (an empty path: it exists, and --skip-existing keeps it).
    std::vector<std::vector<OutputTarget>> channel_targets_;
    Depth depth_ = Depth::f32;  // the channel images' depth
    ReadOptions read_options_;
};

}  // namespace

void check_layer_options_need_weights(const FilterOptions& o) {
    const FilterOptions defaults;
    std::vector<std::string> given;
    if (!o.bias.empty()) given.emplace_back("--bias");
    if (o.activation != defaults.activation) given.emplace_back("--activation");
    if (o.pool != defaults.pool) given.emplace_back("--pool");
    if (o.allow_tf32) given.emplace_back("--allow-tf32");
    if (!given.empty()) {
        throw UsageError(fmt::format("{} belong{} to a convolution layer: give its --weights W.npy",
                                     fmt::join(given, ", "), given.size() == 1 ? "s" : ""));
    }
}

int run_layer_command(const FilterOptions& options) { return LayerCommand(options).run(); }

}  // namespace cudaconv
