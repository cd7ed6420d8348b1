// The main job: decode, filter on the chosen variant, encode, write
// atomically; one input after another. (The overlapped batch pipeline of
// many images is separate work.)
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "cli/conv_params.hpp"
#include "cli/filter_options.hpp"
#include "cli/output_path.hpp"
#include "cli/report.hpp"
#include "core/auto_select.hpp"
#include "core/errors.hpp"
#include "core/registry.hpp"
#include "filters/spec.hpp"
#include "io/image_io.hpp"
#include "kernels/device_info.hpp"

namespace cudaconv {
namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::string variant_names() {
    std::string names = "auto";
    for (const auto& b : all_backends()) names += ", " + std::string(b->name());
    return names;
}

// Probing initialises CUDA, so only when a CUDA variant could be chosen.
DeviceContext device_context(const std::vector<Backend*>& candidates) {
    const bool any_cuda = std::any_of(candidates.begin(), candidates.end(),
                                      [](Backend* b) { return b->uses_cuda(); });
    if (!any_cuda) return {false, "this build has no CUDA variant"};
    const DeviceProbe& probe = probe_devices();
    return {!probe.devices.empty(), probe.problem};
}

struct PlannedImage {
    std::string input;
    OutputTarget target;
};

class FilterCommand {
public:
    explicit FilterCommand(const FilterOptions& o)
        : options_(o), params_(build_conv_params(o, parse_filter_spec(o.filter_spec))) {
        if (o.kernel != "auto") {
            requested_ = find_backend(o.kernel);
            if (!requested_) {
                throw UsageError(fmt::format("-k \"{}\": unknown variant (choose {})", o.kernel,
                                             variant_names()));
            }
        }
        if (o.depth != "same") out_depth_ = parse_depth(o.depth);
        for (const auto& b : all_backends()) candidates_.push_back(b.get());
        plan_outputs();
    }

    int run() {
        int failures = 0;
        std::string json_lines;
        for (const PlannedImage& image : plan_) {
            try {
                const ImageReport report = process(image);
                if (options_.timings) {
                    print_timings(image.target.path == kStdStream ? stderr : stdout, report);
                }
                json_lines += to_json(report).dump() + "\n";
            } catch (const UsageError&) {
                throw;
            } catch (const WorkError& e) {
                spdlog::error("{}", e.what());
                ++failures;
            } catch (const std::exception& e) {
                spdlog::error("{}: {}", image.input, e.what());
                ++failures;
            }
        }
        write_json(json_lines);
        if (plan_.size() > 1) {
            spdlog::info("{} of {} images done, {} failed", plan_.size() - failures, plan_.size(),
                         failures);
        }
        return failures ? kExitWorkFailed : kExitOk;
    }

private:
    // Everything that can be checked before decoding anything.
    void plan_outputs() {
        const auto& inputs = options_.inputs;
        if (std::count(inputs.begin(), inputs.end(), kStdStream) > 1) {
            throw UsageError("- (stdin) can be given only once");
        }
        if (!options_.json_path.empty() && options_.json_path == kStdStream &&
            options_.output == kStdStream) {
            throw UsageError("--json - and -o - would both write to stdout");
        }
        if (options_.output.size() > 1 && options_.output.back() == '/') {
            std::error_code ec;
            fs::create_directories(options_.output, ec);
            if (ec) {
                throw WorkError(fmt::format("{}: cannot create folder: {}", options_.output,
                                            ec.message()));
            }
        }
        std::map<std::string, std::string> output_owner;
        for (const std::string& input : inputs) {
            OutputRequest request{options_.output, options_.format, params_.filter.label,
                                  options_.kernel, inputs.size() > 1};
            OutputTarget target = resolve_output(request, input);
            // The extension and an explicit depth can be checked now; the
            // channel count and `--depth same` wait for the decoded image.
            check_output_format(target.path, target.extension, out_depth_, kChannelsUnknown);
            if (target.path != kStdStream) {
                prepare_output_folder(target.path);
                refuse_overwriting_input(input, target.path);
                const std::string key = fs::weakly_canonical(target.path).string();
                const auto [it, fresh] = output_owner.emplace(key, input);
                if (!fresh) {
                    throw UsageError(fmt::format("{} and {} would both write {}", it->second,
                                                 input, target.path));
                }
            }
            plan_.push_back({input, std::move(target)});
        }
        for (const auto& image : plan_) {
            refuse_overwriting_any_input(image.target.path);
        }
    }

    // A template may name folders that do not exist yet: make them. A plain
    // -o FILE in a missing folder is an error, found before any work.
    void prepare_output_folder(const std::string& path) const {
        const fs::path folder = fs::path(path).parent_path();
        if (folder.empty() || fs::is_directory(folder)) return;
        if (options_.output.find('{') == std::string::npos) {
            throw WorkError(fmt::format("{}: cannot write: the folder {} does not exist", path,
                                        folder.string()));
        }
        std::error_code ec;
        fs::create_directories(folder, ec);
        if (ec) {
            throw WorkError(
                fmt::format("{}: cannot create folder {}: {}", path, folder.string(), ec.message()));
        }
    }

    static void refuse_overwriting_input(const std::string& input, const std::string& output) {
        if (input == kStdStream) return;
        std::error_code ec;
        const bool same = fs::equivalent(input, output, ec) ||
                          fs::weakly_canonical(input) == fs::weakly_canonical(output);
        if (same) {
            throw UsageError(fmt::format("{}: the output would overwrite its input", output));
        }
    }

    void refuse_overwriting_any_input(const std::string& output) const {
        if (output == kStdStream) return;
        for (const std::string& input : options_.inputs) refuse_overwriting_input(input, output);
    }

    Backend* choose_backend(const Job& job, const std::string& input) {
        if (requested_) {
            const Support support = requested_->can_run(job);
            if (!support.ok) {
                throw UsageError(fmt::format("{}: variant {} cannot run this job: {}", input,
                                             requested_->name(), support.reason));
            }
            return requested_;
        }
        if (!device_) device_ = device_context(candidates_);
        const AutoChoice choice = choose_variant(job, candidates_, *device_);
        if (!choice.backend) throw WorkError(fmt::format("{}: {}", input, choice.reason));
        spdlog::info("auto: {} ({})", choice.backend->name(), choice.reason);
        return choice.backend;
    }

    ImageReport process(const PlannedImage& image) {
        const auto start = Clock::now();
        ImageReport report;
        report.input = image.input == kStdStream ? "<stdin>" : image.input;
        report.output = image.target.path == kStdStream ? "<stdout>" : image.target.path;

        const cv::Mat src = read_image(image.input);
        report.decode_ms = ms_since(start);
        const Depth in_depth = depth_of(src);
        const Depth out_depth = out_depth_.value_or(in_depth);
        try {
            check_output_format(image.target.path, image.target.extension, out_depth,
                                src.channels());
        } catch (const UsageError& e) {
            throw WorkError(e.what());  // this input's problem: the batch goes on
        }

        const Size2D size = output_size(src.cols, src.rows, params_);
        if (size.width <= 0 || size.height <= 0) {
            throw WorkError(fmt::format(
                "{}: the {}x{} image is smaller than the {}x{} filter, so --border valid "
                "leaves no output",
                report.input, src.cols, src.rows, params_.filter.width, params_.filter.height));
        }
        cv::Mat dst(static_cast<int>(size.height), static_cast<int>(size.width),
                    cv_type_of(out_depth, src.channels()));
        const Job job{view_of(src), view_of(dst), params_};
        Backend* backend = choose_backend(job, report.input);
        // A variant may name itself differently in the output path ({kernel}).
        OutputTarget target = image.target;
        if (options_.kernel == "auto" && options_.output.find("{kernel}") != std::string::npos) {
            OutputRequest request{options_.output, options_.format, params_.filter.label,
                                  std::string(backend->name()), options_.inputs.size() > 1};
            target = resolve_output(request, image.input);
            refuse_overwriting_any_input(target.path);
            report.output = target.path;
        }

        report.run = backend->run(job, {options_.warmup, options_.repeat});

        const auto encode_start = Clock::now();
        write_file_atomically(target.path,
                              encode_image(dst, target.extension, options_.encode, target.path));
        report.encode_ms = ms_since(encode_start);
        report.total_ms = ms_since(start);

        report.variant = std::string(backend->name());
        report.filter = params_.filter.label;
        report.filter_width = params_.filter.width;
        report.filter_height = params_.filter.height;
        report.width = src.cols;
        report.height = src.rows;
        report.out_width = dst.cols;
        report.out_height = dst.rows;
        report.channels = src.channels();
        report.in_depth = in_depth;
        report.out_depth = out_depth;
        spdlog::info("{} -> {} ({}x{}, {}, {}, {:.1f} ms)", report.input, report.output,
                     report.width, report.height, report.filter, report.variant,
                     report.total_ms);
        return report;
    }

    void write_json(const std::string& lines) const {
        if (options_.json_path.empty()) return;
        write_file_atomically(options_.json_path,
                              std::vector<std::uint8_t>(lines.begin(), lines.end()));
    }

    const FilterOptions& options_;
    ConvParams params_;
    Backend* requested_ = nullptr;
    std::optional<Depth> out_depth_;
    std::vector<Backend*> candidates_;
    std::optional<DeviceContext> device_;
    std::vector<PlannedImage> plan_;
};

}  // namespace

int run_filter_command(const FilterOptions& options) { return FilterCommand(options).run(); }

}  // namespace cudaconv
