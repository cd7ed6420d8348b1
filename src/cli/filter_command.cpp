// The main job over any number of images: expand the inputs, plan every
// output before any work, then run the pipeline (decode, filter on the
// chosen variant, encode, write atomically) and report as images finish.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <opencv2/core/utility.hpp>
#include <opencv2/imgproc.hpp>
#include <spdlog/spdlog.h>

#include "batch/cuda_warmup.hpp"
#include "batch/devices.hpp"
#include "batch/filter_set.hpp"
#include "batch/gpu_decoding.hpp"
#include "batch/heap_reuse.hpp"
#include "io/inputs.hpp"
#include "io/made_folders.hpp"
#include "io/exif_orientation.hpp"
#include "io/jpeg_fit.hpp"
#include "io/metadata.hpp"
#include "io/tiff_metadata.hpp"
#include "batch/interrupt.hpp"
#include "batch/opencv_pool.hpp"
#include "batch/json_lines.hpp"
#include "batch/pinned_slots.hpp"
#include "batch/prefaulted_output.hpp"
#include "batch/pipeline.hpp"
#include "batch/plan.hpp"
#include "batch/premultiply.hpp"
#include "batch/progress.hpp"
#include "batch/saturation.hpp"
#include "batch/shard.hpp"
#include "cli/case_insensitive.hpp"
#include "cli/conv_params.hpp"
#include "cli/filter_options.hpp"
#include "cli/layer_command.hpp"
#include "cli/terminal.hpp"
#include "io/output_path.hpp"
#include "batch/image_report.hpp"
#include "core/auto_select.hpp"
#include "core/bank.hpp"
#include "core/chain.hpp"
#include "core/chain_compose.hpp"
#include "base/errors.hpp"
#include "base/process_exit.hpp"
#include "base/printable.hpp"
#include "variants/registry.hpp"
#include "filters/spec.hpp"
#include "io/format_probe.hpp"
#include "io/image_io.hpp"
#include "io/png_encoder.hpp"
#include "kernels/codecs/gpu_jpeg_encoder.hpp"
#include "kernels/runtime/cuda_host.hpp"
#include "kernels/runtime/device_info.hpp"
#include "kernels/runtime/device_scope.hpp"

namespace cudaconv {
namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

// `-f none`: decode and encode only, through the same pipeline. What a
// format conversion needs, and the codec bound a filter's batch is
// measured against.
constexpr const char* kNoFilter = "none";
// Images a batch holds at once by default: one a worker, which is all a CPU
// variant uses, and half as many again (at least 2) for the GPU. There an
// image waits between workers, queued for the GPU thread and then for a
// worker to encode it (75-100 ms on the GPU machine with 24 in flight, a
// quarter of its time in flight), and CUDA's start-up holds the first
// images; with fewer, workers sit idle meanwhile (edge at workers + 2: 12.9
// of 16 cores busy). Measured there in one call (200 12-megapixel JPEGs,
// -f edge, two runs each): 24 in flight 62.3 and 57.0 images/s, 32 57.4 and
// 55.2, 48 55.8 and 57.1, at peak RSS 2.6, 3.2 and 4.0 GB; more only
// lengthens the queues.
int default_images_in_flight(int workers) { return workers + std::max(2, workers / 2); }
// --decoder auto: the GPU decodes the JPEGs of a batch of at least this
// many images. nvJPEG's start-up (0.6 s for the H100's engine) is repaid
// by its faster decoding only over a long batch: measured there end to
// end (4000x3000 JPEGs, -f edge, 16 cores), 200 images to PNG ran at 93
// images/s decoded on the GPU against 99 on the CPU, and to JPEG at 79
// against 79; 1000 images at 144-148 against 127-130 to PNG, and at
// 128-134 against 87-88 to JPEG. Even at about 300 images.
constexpr std::size_t kGpuDecodeLeastImages = 400;

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

int worker_count(int jobs) {
    if (jobs > 0) return jobs;
    return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// Images each GPU thread past the first holds besides: one filtering, two
// queued for it, one being copied into its page-locked slot
// (batch/pipeline.hpp).
constexpr std::size_t kInFlightPerExtraLane = 4;

// With JPEGs decoded on the GPU, a whole group more a device: an image
// waiting for the GPU holds only its file's bytes and its output, and the
// groups need images queued to grow.
std::size_t images_in_flight(int in_flight, int workers, bool gpu_decode, std::size_t lanes) {
    if (in_flight > 0) return static_cast<std::size_t>(in_flight);
    lanes = std::max<std::size_t>(1, lanes);
    return static_cast<std::size_t>(default_images_in_flight(workers)) +
           (gpu_decode ? GpuDecoding::kGroupImages * lanes : 0) +
           (lanes - 1) * kInFlightPerExtraLane;
}

// Of images_in_flight, those a lane left out gives back: none where
// --in-flight sets the count.
std::size_t in_flight_per_lane(int in_flight, bool gpu_decode) {
    if (in_flight > 0) return 0;
    return kInFlightPerExtraLane + (gpu_decode ? GpuDecoding::kGroupImages : 0);
}

// The threads the cpu variant runs on: OpenCV's pool, which follows the
// process's CPU affinity and quota where the hardware count does not.
unsigned cpu_threads() { return static_cast<unsigned>(std::max(1, cv::getNumThreads())); }

// What an image file's header claims (PNG's IHDR, JPEG's frame header,
// ...), read from its first bytes before it is decoded; a width and height
// of 0 when they cannot be told (stdin, an unreadable file, a header
// further in) or are not plausible.
detail::FormatProbe claimed_header(const std::string& path) {
    const std::vector<std::uint8_t> head = read_file_head(path);
    detail::FormatProbe probe = detail::probe_image(head.data(), head.size());
    // A corrupt header may claim anything; decoding will say what is wrong.
    constexpr std::int64_t kPlausibleSide = std::int64_t{1} << 20;
    if (probe.width <= 0 || probe.height <= 0 || probe.width > kPlausibleSide ||
        probe.height > kPlausibleSide) {
        probe.width = probe.height = 0;
    }
    return probe;
}

// The file -f reads, where it names one (-f @path, or a path that exists;
// filters/spec.hpp), or "".
std::string filter_file(const std::string& spec) {
    if (!spec.empty() && spec[0] == '@') return spec.substr(1);
    std::error_code ec;
    return fs::is_regular_file(spec, ec) ? spec : "";
}

// One image on its way through the pipeline.
struct ImageWork : WorkItem {
    std::size_t input_index = 0;  // in plan_: the input's place on the command line
    cv::Mat src;
    cv::Mat dst;
    Backend* backend = nullptr;      // the first step's; nullptr for -f none, and until chosen
    std::vector<Backend*> backends;  // each step's: one for one filter
    // A chain run as the one filter its steps equal, on `backend`
    // (FilterSet::one_filter_job); `backends` then holds that variant alone.
    bool as_one_filter = false;
    // -k auto while CUDA was still starting: the GPU thread chooses.
    bool choose_on_gpu_thread = false;
    OutputTarget target;
    ImageReport report;
    // A PNG output of a CUDA variant: its rows compressed on the device,
    // which then downloads the stream instead of dst's pixels.
    std::optional<PngRowsRequest> png_rows;
    // A JPEG output of a CUDA variant: the file encoded on the device.
    std::optional<JpegRequest> jpeg;
    // Where src's pixels are, once copied into page-locked memory for the
    // upload (batch/pinned_slots.hpp); given back after the filter.
    PinnedSlots::Lease pinned;
    // A JPEG the GPU decodes (--decoder): the file's bytes, and then where
    // its pixels are on the device; src stays empty.
    std::optional<EncodedImage> encoded;
    std::optional<GpuJpegImage> gpu;
    // --alpha premultiply on a 4-channel image: src and dst are float32
    // premultiplied (batch/premultiply.hpp) until encode() divides dst by
    // its alpha into the output depth; the input depth's maximum.
    bool premultiplied = false;
    double input_max = 1.0;
    // The input's EXIF and ICC profile, for the output (io/metadata.hpp);
    // empty under --strip.
    ImageMetadata metadata;
    // A bank (--combine): each filter's float32 response, until encode()
    // combines them into dst.
    std::vector<cv::Mat> responses;
    // A stack written one file a filter: each filter's file, as
    // FilterCommand::filter_targets_ holds them; dst then holds one
    // response at a time.
    std::vector<OutputTarget> filter_targets;

    // The input as the variants see it: src, or the JPEG the GPU decodes
    // (8-bit, as nvJPEG inspected it; no pixels on the host).
    ConstImageView input_view() const {
        if (!gpu) return view_of(src);
        const JpegInspection& in = gpu->inspection;
        return {nullptr,     in.width,  in.height,
                in.channels, Depth::u8, static_cast<std::int64_t>(in.width) * in.channels};
    }
};

// How the report and {kernel} name the variants of a chain's steps: the
// one variant's name, or each step's joined by '+'.
std::string variant_label(const std::vector<Backend*>& backends) {
    if (backends.empty()) return "";
    const bool one = std::all_of(backends.begin(), backends.end(),
                                 [&](const Backend* b) { return b == backends.front(); });
    if (one) return std::string(backends.front()->name());
    std::string label;
    for (const Backend* b : backends) label += (label.empty() ? "" : "+") + std::string(b->name());
    return label;
}

ImageShape shape_of(const ConstImageView& image) {
    const int sample_bytes = static_cast<int>(depth_bytes(image.depth));
    return {image.width, image.height, image.channels, sample_bytes, image.channels * sample_bytes};
}

class FilterCommand {
public:
    explicit FilterCommand(const FilterOptions& o) : options_(o) {
        const std::vector<std::string>& specs = o.filter_specs;
        if (specs.size() == 1 && specs.front() == kNoFilter) {
            const std::string ignored = check_options_without_filter(o);
            if (!ignored.empty()) spdlog::warn("{}", ignored);
        } else {
            std::vector<Filter> filters;
            for (const std::string& spec : specs) {
                if (spec == kNoFilter) {
                    throw UsageError("-f none runs no filter, so it cannot be a step of a chain");
                }
                filters.push_back(parse_filter_spec(spec));
            }
            if (o.combine.empty()) {
                filters_ = FilterSet::chain(build_chain_params(o, std::move(filters)));
            } else {
                const std::optional<Combine> how = parse_combine_option(o.combine);
                filters_ = FilterSet::bank(build_bank_params(o, std::move(filters)), *how);
            }
        }
        per_filter_ = filters_.is_stack() && o.output.find("{filter}") != std::string::npos;
        if (o.kernel != "auto") {
            requested_ = find_backend(o.kernel);
            if (!requested_) {
                throw UsageError(fmt::format("-k \"{}\": unknown variant (choose {})", o.kernel,
                                             variant_names()));
            }
        }
        if (o.depth != "same") out_depth_ = parse_depth(o.depth);
        // A stacked bank is float32 unless --depth says otherwise, in one
        // .npy (which holds that only) or in a file a filter alike.
        if (filters_.is_stack() && !out_depth_) out_depth_ = Depth::f32;
        for (const auto& b : all_backends()) candidates_.push_back(b.get());
        if (!o.json_path.empty() && o.json_path == kStdStream && o.output == kStdStream) {
            throw UsageError("--json - and -o - would both write to stdout");
        }
        refuse_image_data_to_terminal(o.output, stdout_is_terminal());
        if (o.inputs.empty() && o.from.empty()) {
            throw UsageError("no input: name files, folders or patterns, or --from FILE|-");
        }
        existing_ = existing_outputs_policy(o.skip_existing, o.overwrite);
        check_devices();      // before the decoder opens on the first of them
        check_gpu_decoder();  // before the plan makes any output folder
        read_options_.max_pixels = o.max_pixels;
        read_options_.auto_orient = !o.no_auto_orient;
        background_ = parse_background(o.background);
        read_options_.bytes_beside = [this](const ImageShape& in) { return bytes_beside(in); };
        read_options_.accepted = [this](const ImageShape& header) {
            if (prefault_) prefault_output(header);
        };
        if (!o.shard.empty()) shard_ = parse_shard(o.shard);
        const std::vector<InputFile> inputs =
            expand_inputs({o.inputs, o.recursive, o.from, o.from_root});
        several_inputs_ = inputs.size() > 1;
        PlanRequest plan{output_request(several_inputs_, o.kernel),
                         existing_,
                         out_depth_,
                         o.json_path,
                         {},
                         {},
                         [this](const std::vector<PlannedImage>& planned) {
                             check_gpu_encoder(planned);
                             refuse_stack_outside_npy(planned);
                         },
                         shard_};
        if (o.kernel == "auto" && names_kernel()) {
            for (const Backend* b : candidates_) plan.later_kernels.emplace_back(b->name());
        }
        if (!o.from.empty() && o.from != kStdStream) plan.other_inputs.push_back(o.from);
        for (const std::string& spec : o.filter_specs) {
            if (const std::string file = filter_file(spec); !file.empty()) {
                plan.other_inputs.push_back(file);
            }
        }
        plan_ = per_filter_ ? plan_each_filter(inputs, plan) : plan_outputs(inputs, plan);
        if (shard_) {
            spdlog::debug("shard {}: {} of the {} inputs", shard_->text(), plan_.size(),
                          inputs.size());
        }
        input_paths_ = canonical_inputs(inputs);
    }

    int run() {
        // Created now that the plan has passed, before any image starts.
        std::optional<JsonLines> json;
        if (!options_.json_path.empty()) {
            json.emplace(options_.json_path, existing_ == ExistingOutputs::overwrite);
        }
        std::vector<std::size_t> work;  // plan indices to process
        for (std::size_t i = 0; i < plan_.size(); ++i) {
            if (!plan_[i].skip) work.push_back(i);
        }
        // One image under -k auto: where the CPU would finish it before CUDA
        // could start, CUDA is never started (auto_select.hpp). Before
        // decoding, the header's size tells; the channels are taken as 3.
        // Once the warm-up has started, CUDA is paid for: the rule then stays
        // out, whatever the decoded image turns out to be.
        // A CPU variant's output is made while the image decodes, once
        // read_image's checks have passed its header (read_options_.accepted).
        // The header is read here only where it serves one of the two.
        const bool cpu_requested = requested_ && !requested_->uses_cuda();
        if (!filters_.none() && work.size() == 1 && (!requested_ || cpu_requested)) {
            const detail::FormatProbe header = claimed_header(plan_[work.front()].source.path);
            one_image_cpu_ = !requested_ && header.width > 0 && cpu_for_header(header);
            prefault_ = one_image_cpu_ || cpu_requested;
        }
        // No more devices than images: each one past that would only start.
        if (devices_.size() > std::max<std::size_t>(1, work.size())) {
            devices_.resize(std::max<std::size_t>(1, work.size()));
        }
        if (!devices_.empty()) set_default_device(devices_.front());
        if (may_use_cuda() && !work.empty() && !one_image_cpu_) warmup_.start();
        gpu_decode_ = options_.decoder == "gpu" ||
                      (options_.decoder == "auto" && may_use_cuda() && !one_image_cpu_ &&
                       work.size() >= kGpuDecodeLeastImages);
        const std::size_t threads = gpu_threads(work.size());
        const std::size_t lanes = lane_count(devices_.size(), threads, work.size());
        if (may_use_cuda() && !one_image_cpu_ && work.size() > 1) {
            spdlog::debug("{} GPU thread{} a device{}", threads, threads == 1 ? "" : "s",
                          gpu_decode_ ? " (JPEGs decoded on the GPU: one decoder a device)" : "");
        }
        // One image: its PNG is compressed on every core, which are idle
        // then; in a batch the workers each encode one.
        encode_ = options_.encode;
        encode_.background = background_;
        if (work.size() == 1) encode_.threads = static_cast<int>(cpu_threads());

        const bool bar = progress_bar_wanted(
            {stderr_is_terminal(), stdout_is_terminal(), options_.json_path == kStdStream,
             !spdlog::should_log(spdlog::level::info), work.size()});
        BatchProgress progress({plan_.size(), bar, options_.timings, json ? &*json : nullptr,
                                shard_ ? shard_->text() : std::string(), devices_});
        progress_ = &progress;
        for (const PlannedImage& image : plan_) {
            if (image.skip) progress.skipped(image.source.path, image.target.path);
        }

        const GracefulStop stop;
        read_options_.cancelled = [&stop] { return stop.requested(); };
        stop_requested_ = [&stop] { return stop.requested(); };
        PipelineStages stages;
        if (const int slots = pinned_slot_count(work.size()); slots > 0) {
            for (std::size_t lane = 0; lane < lanes; ++lane) {
                pinned_.push_back(std::make_unique<PinnedSlots>(slots));
            }
            stages.prepare_for_gpu = [&](WorkItem& item) {
                copy_to_pinned(static_cast<ImageWork&>(item), stop);
            };
        }
        if (gpu_decode_) {
            gpu_decoding_.set_lanes(lanes, devices_.size());
            if (options_.decoder == "auto") gpu_decoding_.open_in_background(first_device());
            stages.gpu_group = [&](const auto& items) { decode_on_gpu(items); };
        }
        stages.enter_lane = [&](std::size_t lane) { return enter_lane(lane); };
        stages.bind_lane = [&](std::size_t lane) {
            if (!devices_.empty()) set_thread_device(lane_device(lane));
        };
        stages.left_lane = [&](std::size_t lane, const std::string& lost) {
            left_lane(lane, lost);
        };
        stages.decode = [&](std::size_t k) { return decode(work[k]); };
        stages.filter = [&](WorkItem& item) { filter(static_cast<ImageWork&>(item)); };
        stages.encode = [&](WorkItem& item) { encode(static_cast<ImageWork&>(item)); };
        stages.done = [&](WorkItem& item) {
            progress.done(static_cast<ImageWork&>(item).report,
                          static_cast<ImageWork&>(item).input_index);
        };
        failed_on_.assign(work.size(), -1);
        stages.failed = [&](std::size_t k, const std::string& error) {
            progress.failed(display(plan_[work[k]].source.path), error, failed_on_[k]);
        };
        stages.skipped = [&](std::size_t k, const std::string& output) {
            progress.skipped(display(plan_[work[k]].source.path), output);
        };
        // progress.finish counts every planned image not done, skipped or
        // failed as not done, those never started included.
        stages.dropped = [](std::size_t) {};
        stages.stop = [&] { return stop.requested(); };
        const int workers = worker_count(options_.jobs);
        try {
            PipelineOptions pipeline{
                work.size(), workers,
                images_in_flight(options_.in_flight, workers, gpu_decode_, lanes),
                GpuDecoding::kGroupImages, lanes};
            pipeline.in_flight_per_lane = in_flight_per_lane(options_.in_flight, gpu_decode_);
            run_pipeline(stages, pipeline);
        } catch (const UsageError& e) {
            try {
                progress.finish(0);  // the summary of what was done, then the error
            } catch (const std::exception& finish_error) {
                spdlog::error("{}", finish_error.what());  // the UsageError still wins
            }
            throw;
        }
        const int signal_number = stop.signal_number();
        const BatchSummary summary = progress.finish(signal_number);
        if (signal_number != 0) return kExitSignalBase + signal_number;
        if (gpu_decode_) {
            gpu_decoding_.log_buffers();
            // Every output is written and closed, the JSON lines too (one
            // write() each): what is left of the decoders is freeing.
            if (skip_teardown_at_exit()) gpu_decoding_.keep_until_exit();
        }
        return summary.failed || progress.json_failed() ? kExitWorkFailed : kExitOk;
    }

private:
    OutputRequest output_request(bool several, const std::string& kernel) const {
        return {options_.output, options_.format, filters_.none() ? kNoFilter : filters_.label(),
                kernel,          several,         ""};
    }

    static std::string display(const std::string& input) {
        return input == kStdStream ? "<stdin>" : input;
    }

    // What the memory check weighs beside a decoded image (read_image's
    // options): the output, and the encoder's two copies of it at most (a
    // PNG's filtered rows and its compressed stream), three more where
    // Exiv2 rewrites a TIFF output with metadata (the file it reads, the
    // one it writes, the bytes read back), one more for a WebP output
    // (libwebp's lossless encoder needs about 1.7 bytes a pixel more than
    // the JPEG encoder: a 100-megapixel RGB image encodes under an
    // address-space limit of 2.22 GB to WebP, 2.05 GB to JPEG), and for a
    // stack written one file a filter the other filters' files, held until
    // all are staged. With -f none the decoded image is the output.
    std::uint64_t bytes_beside(const ImageShape& in) const {
        constexpr int kEncoderCopies = 2;
        constexpr int kTiffMetadataCopies = 3;
        constexpr int kWebpCopies = 1;
        int copies = kEncoderCopies;
        if (rewrites_tiff_metadata()) copies += kTiffMetadataCopies;
        if (encodes_webp()) copies += kWebpCopies;
        ImageShape out = in;
        if (filters_.none()) {
            out.pixel_bytes *= copies;
            return out.bytes();
        }
        const Size2D size = filters_.output_size(in.width, in.height);
        out.width = size.width;
        out.height = size.height;
        if (out_depth_) {  // the channels (4 at most where not told) at that depth
            out.pixel_bytes =
                (in.channels > 0 ? in.channels : 4) * static_cast<int>(depth_bytes(*out_depth_));
        }
        if (per_filter_) copies += static_cast<int>(filters_.size()) - 1;
        out.pixel_bytes *= 1 + copies;
        // A chain on the CPU: the float32 image a step reads, and the one it
        // writes (core/chain.hpp), of every channel (4 where not told).
        ImageShape between = in;
        between.pixel_bytes = 4 * (in.channels > 0 ? in.channels : 4);
        // A stacked bank's output holds every response, unless each goes to
        // a file of its own.
        if (filters_.is_stack() && !per_filter_) {
            out.pixel_bytes *= static_cast<int>(filters_.size());
        }
        // A bank: every filter's response, float32, until they are combined.
        const std::size_t n = filters_.size();
        const std::uint64_t chain_bytes = filters_.is_bank() ? n * between.bytes()
                                          : n > 1
                                              ? std::min<std::uint64_t>(n - 1, 2) * between.bytes()
                                              : 0;
        if (options_.alpha == "premultiply" && in.channels == 4) {
            // The float32 premultiplied input and filtered output besides.
            ImageShape floats = in;
            floats.pixel_bytes = 4 * 4;
            return out.bytes() + 2 * floats.bytes() + chain_bytes;
        }
        return out.bytes() + chain_bytes;
    }

    // A single image on a CPU variant: its output's pages taken while it
    // decodes (batch/prefaulted_output.hpp), where the header tells the
    // type; called once the header's size passed read_image's checks.
    void prefault_output(const ImageShape& header) {
        if (header.width <= 0 || header.channels == 0) return;
        const Size2D size = filters_.output_size(header.width, header.height);
        if (size.width <= 0 || size.height <= 0) return;
        const Depth in_depth = header.sample_bytes == 2 ? Depth::u16 : Depth::u8;
        prefaulted_.start(static_cast<int>(size.height), static_cast<int>(size.width),
                          cv_type_of(out_depth_.value_or(in_depth), header.channels));
    }

    // Filterings a run makes: --warmup plus --repeat.
    int filter_runs() const { return std::max(1, options_.warmup + options_.repeat); }

    bool may_use_cuda() const {
        if (filters_.none()) return false;
        if (requested_) return requested_->uses_cuda();
        return std::any_of(candidates_.begin(), candidates_.end(),
                           [](Backend* b) { return b->uses_cuda(); });
    }

    // --combine stack into one file: one float32 channel a filter and
    // image channel, which only .npy holds; refused before any work for
    // another output.
    void refuse_stack_outside_npy(const std::vector<PlannedImage>& planned) const {
        if (!filters_.is_stack() || per_filter_) return;
        for (const PlannedImage& image : planned) {
            if (image.target.extension == ".npy") continue;
            throw UsageError(fmt::format(
                "{}: --combine stack writes one channel a filter (and image channel), which only "
                ".npy holds; name the output .npy, or put {{filter}} in -o for one file a filter",
                image.target.path == kStdStream ? "<stdout>" : image.target.path));
        }
    }

    // --combine stack with {filter} in -o: one file a filter, {filter} its
    // own label, planned as one output a filter (as a layer's {channel},
    // cli/layer_command.cpp), each checked as any plan is and against the
    // other filters' files, before any work. An input is skipped
    // (--skip-existing) when all its filters' files exist; otherwise those
    // that exist are kept and the others written.
    std::vector<PlannedImage> plan_each_filter(const std::vector<InputFile>& inputs,
                                               PlanRequest request) {
        refuse_files_shared_by_filters(inputs, request.output);
        return plan_parts(
            inputs, request, filters_.size(),
            [&](OutputRequest& output, std::size_t k) {
                output.filter = filters_.filters()[k].filter.label;
            },
            filter_targets_);
    }

    // Two filters of a stack that would write one file (the same label,
    // or labels alike once made file-name-safe): exit 2 before any work.
    // One filter's files for two inputs are its plan's to refuse.
    void refuse_files_shared_by_filters(const std::vector<InputFile>& inputs,
                                        OutputRequest request) const {
        struct Writer {
            const InputFile* input;
            std::size_t filter;
        };
        std::map<std::string, Writer> writers;
        for (const InputFile& input : inputs) {
            for (std::size_t k = 0; k < filters_.size(); ++k) {
                request.filter = filters_.filters()[k].filter.label;
                const std::string path = resolve_output(request, {input.path, input.dir}).path;
                const auto [other, fresh] =
                    writers.emplace(canonical_path(path), Writer{&input, k});
                if (fresh || other->second.filter == k) continue;
                const auto whose = [&](const Writer& w) {
                    return several_inputs_ ? fmt::format("{} of {}", filters_.part_name(w.filter),
                                                         display(w.input->path))
                                           : filters_.part_name(w.filter);
                };
                throw UsageError(fmt::format(
                    "{}: {} and {} would both write it ({{filter}} names each filter's file by "
                    "its label); nothing was done",
                    path, whose(other->second), whose({&input, k})));
            }
        }
    }

    bool names_kernel() const { return options_.output.find("{kernel}") != std::string::npos; }

    // Whether the outputs are WebP (by the template's extension, or
    // --format for stdout).
    bool encodes_webp() const {
        const std::string extension = ascii_lower(fs::path(options_.output).extension().string());
        const std::string format = ascii_lower(options_.format);
        return extension == ".webp" || format == "webp" || format == ".webp";
    }

    // Whether any planned output is a PNG (targets' extensions are lower
    // case: io/output_path.hpp).
    bool writes_png() const {
        return std::any_of(plan_.begin(), plan_.end(), [](const PlannedImage& image) {
            return image.target.extension == ".png";
        });
    }

    // Whether Exiv2 may rewrite the outputs (TIFF by the template's
    // extension, metadata kept, a build with Exiv2).
    bool rewrites_tiff_metadata() const {
        const std::string extension = ascii_lower(fs::path(options_.output).extension().string());
        return !options_.strip && is_tiff_extension(extension) && !exiv2_version().empty();
    }

    // The channels of each file written for an input of `channels`: a
    // stack's into one file, else the image's (with a kept alpha).
    int written_channels(int channels) const {
        return per_filter_ ? channels : filters_.output_channels(channels);
    }

    // The files written for this image: its one output, or each filter's
    // that --skip-existing does not keep.
    static std::vector<OutputTarget> targets_of(const ImageWork& work) {
        if (work.filter_targets.empty()) return {work.target};
        std::vector<OutputTarget> targets;
        for (const OutputTarget& target : work.filter_targets) {
            if (!target.path.empty()) targets.push_back(target);
        }
        return targets;
    }

    // --encoder gpu, refused (UsageError) where the command line already
    // shows that the GPU cannot encode: no filter, a CPU variant named with
    // -k, an output other than JPEG or PNG at level 1 (the device writes
    // level 1's runs only), a JPEG output where nvJPEG does not load. Run by
    // plan_outputs before it makes any folder. What only an image tells (-k
    // auto's choice for it, the device's room for the encoder) is left to
    // each image: one that the GPU does not encode is encoded by the CPU,
    // and said (warn_cpu_encoded).
    void check_gpu_encoder(const std::vector<PlannedImage>& plan) const {
        if (options_.encoder != "gpu") return;
        refuse_where_nothing_runs_on_gpu("--encoder", "encodes");
        EncodeOptions level_1 = options_.encode;
        level_1.png_level = 1;
        bool writes_jpeg = false;
        for (const PlannedImage& image : plan) {
            const std::string& extension = image.target.extension;
            if (image.skip || png_rows_stream_fits(extension, options_.encode)) continue;
            if (is_jpeg_extension(extension)) {
                writes_jpeg = true;
                continue;
            }
            if (png_rows_stream_fits(extension, level_1)) {
                throw UsageError(fmt::format("--encoder gpu: the GPU writes PNG at --png-level 1 "
                                             "only, not {} (--encoder auto or cpu writes it on "
                                             "the CPU)",
                                             options_.encode.png_level));
            }
            throw UsageError(fmt::format(
                "--encoder gpu: {}: the GPU encodes PNG and JPEG only (--encoder auto or cpu "
                "encodes it on the CPU)",
                image.target.path == kStdStream ? "<stdout>" : image.target.path));
        }
        if (writes_jpeg) {
            const std::string problem = gpu_jpeg_encoder_problem();
            if (!problem.empty()) {
                throw UsageError(fmt::format("--encoder gpu: the GPU cannot encode JPEG here: {} "
                                             "(--encoder auto or cpu encodes it on the CPU)",
                                             problem));
            }
        }
    }

    // --decoder gpu, refused (UsageError) before any work where the command
    // line shows that the GPU cannot decode (no filter, a CPU variant named
    // with -k) or nvJPEG cannot start here. An input it does not take (not
    // a JPEG, or a kind nvJPEG refuses) is decoded by the CPU, and said
    // (warn_cpu_decoded).
    void check_gpu_decoder() {
        if (options_.decoder != "gpu") return;
        refuse_where_nothing_runs_on_gpu("--decoder", "decodes");
        gpu_decoding_.open_or_refuse(first_device());
    }

    // --devices, before any work: its value (parse_devices), nothing to
    // run on a GPU (-f none, a CPU variant named with -k), and the devices
    // it names present here (which probes CUDA now). Not given, the batch
    // runs on the first device (devices_ stays empty).
    void check_devices() {
        if (!options_.devices) return;
        devices_request_ = parse_devices(*options_.devices);
        const std::string value = printable(*options_.devices);
        if (filters_.none()) {
            throw UsageError(fmt::format(
                "--devices \"{}\": -f none runs nothing on a GPU (leave it out)", value));
        }
        if (requested_ && !requested_->uses_cuda()) {
            throw UsageError(
                fmt::format("--devices \"{}\": -k {} filters on the CPU (choose a CUDA "
                            "variant or auto, or leave --devices out)",
                            value, requested_->name()));
        }
        const DeviceProbe& probe = probe_devices();
        devices_ = choose_devices(devices_request_, device_numbers(probe), probe.problem);
        if (devices_.empty()) {
            spdlog::debug("--devices all: no CUDA device ({}); the CPU filters", probe.problem);
        }
    }

    // The device of the first lane, where the run chose one; else -1 (the
    // first device there is).
    int first_device() const { return devices_.empty() ? -1 : devices_.front(); }

    // On a lane's GPU thread (batch/pipeline.hpp): starts the lane
    // (start_lane), and counts it among those running, which
    // takes_giving_up asks.
    bool enter_lane(std::size_t lane) {
        if (!start_lane(lane)) return false;
        const std::lock_guard<std::mutex> lock(choice_mutex_);
        lanes_running_.insert(lane);
        return true;
    }

    // Whether a lane runs. The thread's CUDA work goes to the lane's device
    // from now on. With several devices, it makes its device's context (the
    // warm-up makes the first's) and its JPEG decoder where the GPU decodes;
    // the thread before it is only bound to the device (bind_lane), and
    // takes no image before that is done.
    // A device whose context cannot be made is left out where another
    // starts (left_lane says so): the others take its share.
    // A device's second GPU thread (batch/devices.hpp) starts where the
    // device has the memory for it or --gpu-threads asks for it, and is
    // left out quietly otherwise.
    bool start_lane(std::size_t lane) {
        if (!devices_.empty()) set_thread_device(lane_device(lane));
        if (devices_.size() > 1 && !make_device_context(lane_device(lane))) return false;
        if (!first_thread(lane)) {
            return options_.gpu_threads || takes_second_gpu_thread(device_memory(lane));
        }
        if (gpu_decode_ && devices_.size() > 1) gpu_decoding_.start_lane(lane);
        return true;
    }

    // Whether a GPU thread on `lane`'s device gave it up for memory
    // (give_device_to_other_lane). Under choice_mutex_.
    bool device_given_up(std::size_t lane) const {
        return std::any_of(lanes_out_of_memory_.begin(), lanes_out_of_memory_.end(),
                           [&](std::size_t other) { return same_device(other, lane); });
    }

    // Whether `lane`, whose image ran out of device memory, is the one of
    // its device's threads to give the device up: another runs there and
    // none gave it up before (then this one runs its image once more).
    // Asked and marked at once, so that two threads out of memory together
    // do not both leave.
    bool takes_giving_up(std::size_t lane) {
        const std::lock_guard<std::mutex> lock(choice_mutex_);
        if (device_given_up(lane)) return false;
        const bool another =
            std::any_of(lanes_running_.begin(), lanes_running_.end(), [&](std::size_t other) {
                return other != lane && same_device(other, lane);
            });
        if (another) lanes_out_of_memory_.insert(lane);
        return another;
    }

    // An image ran out of device memory on a GPU thread whose device has
    // another (takes_giving_up): the thread frees what it keeps there and
    // leaves the batch (DeviceLost), so that the other thread runs the
    // image, and those after it, with the device's memory to itself.
    [[noreturn]] void give_device_to_other_lane(std::string message) {
        release_thread_device_memory();
        throw DeviceLost(std::move(message));
    }

    // GPU threads a device for a batch of `images` (batch/devices.hpp), or
    // --gpu-threads'.
    std::size_t gpu_threads(std::size_t images) const {
        const bool on_gpu = may_use_cuda() && !one_image_cpu_;
        std::size_t threads = gpu_threads_per_device(on_gpu, gpu_decode_, writes_png(), images);
        if (options_.gpu_threads && on_gpu) {
            threads = static_cast<std::size_t>(*options_.gpu_threads);
        }
        return threads;
    }

    // Whether a lane is its device's first GPU thread.
    bool first_thread(std::size_t lane) const {
        return lane < std::max<std::size_t>(1, devices_.size());
    }

    // A lane's device, by CUDA's number: -1 where the batch runs on the
    // first device there is (devices_ empty).
    int lane_device(std::size_t lane) const {
        return devices_.empty() ? -1 : devices_.at(device_slot(lane, devices_.size()));
    }

    // Whether two lanes are GPU threads of one device.
    bool same_device(std::size_t a, std::size_t b) const {
        return lane_device(a) == lane_device(b);
    }

    // A lane's device as messages name it: the first device there is
    // where the batch names none.
    int shown_device(std::size_t lane) const {
        const int device = lane_device(lane);
        if (device >= 0) return device;
        const DeviceProbe& probe = probe_devices();
        return probe.devices.empty() ? 0 : probe.devices.front().index;
    }

    // The memory of a lane's device as the probe found it; 0 where it
    // found none.
    std::uint64_t device_memory(std::size_t lane) const {
        const DeviceProbe& probe = probe_devices();
        const int device = lane_device(lane);
        for (const DeviceInfo& info : probe.devices) {
            if (device < 0 || info.index == device) return info.global_memory_bytes;
        }
        return 0;
    }

    // A lane the pipeline left out: its device could not start, or was
    // lost (`lost`, the error that lost it) while others run.
    void left_lane(std::size_t lane, const std::string& lost) {
        const int device = lane_device(lane);
        bool out_of_memory = false;
        {
            const std::lock_guard<std::mutex> lock(choice_mutex_);
            lanes_running_.erase(lane);
            out_of_memory = lanes_out_of_memory_.count(lane) > 0;
        }
        if (out_of_memory) {
            progress_->log_above(fmt::format("device {}: one GPU thread from here on: an image "
                                             "needed more of its memory than two leave",
                                             shown_device(lane)),
                                 spdlog::level::info);
            return;
        }
        if (!first_thread(lane) && lost.empty()) {
            // Its first thread runs, or is said not to.
            const bool small = !takes_second_gpu_thread(device_memory(lane));
            spdlog::debug(
                "device {}: one GPU thread{}", shown_device(lane),
                small ? fmt::format(" (its memory is under {} GB)", kSecondThreadLeastMemory >> 30)
                      : std::string(" (its CUDA context cannot be made)"));
            return;
        }
        {
            // Said once a device, by whichever of its threads is left out first.
            const std::lock_guard<std::mutex> lock(choice_mutex_);
            if (!left_devices_.insert(device).second) return;
        }
        progress_->log_above(
            lost.empty() ? fmt::format("--devices: device {} cannot start (its CUDA context); "
                                       "the other devices take its images",
                                       device)
                         : fmt::format("--devices: device {} is lost ({}); the other devices "
                                       "take its images",
                                       device, lost),
            spdlog::level::warn);
    }

    // The device an image ran on, by CUDA's number: its lane's, or the first.
    int device_of(const ImageWork& work) const { return shown_device(work.lane); }

    // `option` gpu (--encoder, --decoder) where the command line runs
    // nothing on the GPU: -f none, or a CPU variant named with -k.
    void refuse_where_nothing_runs_on_gpu(const char* option, const char* codec_does) const {
        if (filters_.none()) {
            throw UsageError(fmt::format("{} gpu: -f none runs nothing on the GPU, so the CPU "
                                         "{} ({} auto or cpu)",
                                         option, codec_does, option));
        }
        if (requested_ && !requested_->uses_cuda()) {
            throw UsageError(fmt::format("{} gpu: -k {} filters on the CPU, so the CPU {} "
                                         "(choose a CUDA variant or auto, or {} auto or cpu)",
                                         option, requested_->name(), codec_does, option));
        }
    }

    // Under -k auto, choosing needs the CUDA probe (about 110-210 ms on the
    // GPU machine), which a worker would wait for with the first image
    // decoded, all workers at once, at the start of every batch. Until the
    // probe has ended, a decoded image goes to the GPU thread instead, which
    // chooses (and waits for CUDA's context there in any case), and the
    // worker decodes the next one. Not where the output's name holds
    // {kernel}, which is needed before the image is queued.
    bool choose_later() const {
        return !requested_ && warmup_.started() && !warmup_.probed() && !names_kernel();
    }

    // Whether the CPU should run the one image this header describes, so
    // that CUDA is not started (cpu_for_one_image, core/auto_select.hpp).
    // Its channels and depth as the header tells them (a PFM's float
    // samples by its pixel's bytes), else RGB 8-bit.
    bool cpu_for_header(const detail::FormatProbe& header) const {
        const bool pfm = header.format == detail::ImageFormat::pfm;
        const int channels = pfm ? header.pixel_bytes / 4 : header.channels;
        const int sample_bytes = pfm ? 4 : header.sample_bytes;
        ConstImageView src;
        src.width = header.width;
        src.height = header.height;
        src.channels = channels > 0 ? channels : 3;
        src.depth = sample_bytes == 4 ? Depth::f32 : sample_bytes == 2 ? Depth::u16 : Depth::u8;
        const Size2D out = filters_.output_size(header.width, header.height);
        ImageView dst;
        dst.width = out.width;
        dst.height = out.height;
        dst.channels = src.channels;
        dst.depth = out_depth_.value_or(src.depth);
        // A chain that runs as one filter on the CPU is priced as that filter.
        const std::optional<Job> one = filters_.one_filter_job(src, dst);
        const std::vector<Job> jobs = one ? std::vector<Job>{*one} : filters_.jobs(src, dst);
        const std::int64_t pixels = header.width * header.height;
        const std::int64_t bytes =
            pixels * src.channels * static_cast<std::int64_t>(depth_bytes(src.depth));
        const DecodeKind kind = header.format == detail::ImageFormat::jpeg  ? DecodeKind::jpeg
                                : header.format == detail::ImageFormat::png ? DecodeKind::png
                                : pfm                                       ? DecodeKind::pfm
                                                                            : DecodeKind::other;
        const double decode_ms = estimated_decode_ms(kind, pixels, bytes);
        return cpu_for_one_image(jobs, candidates_, cpu_threads(), filter_runs(), decode_ms)
                   .backend != nullptr;
    }

    // The variants an image's filters run on (work.backends: each step's,
    // one for one filter) and whether its chain runs as one filter
    // (work.as_one_filter): -k's variant, or auto's choice. A chain whose
    // steps equal one rank-1 filter (FilterSet::one_filter_job) runs as that
    // filter where the variant for it (-k's, or auto's choice for that
    // filter) runs composed chains (core/chain_compose.hpp). Otherwise auto
    // chooses the first step's variant as for one filter, and each later
    // step's among the variants on the same side (CPU or CUDA), so that a
    // chain on the GPU stays on the device.
    void choose_variants(ImageWork& work) {
        const ConstImageView src = work.input_view();
        const ImageView dst = view_of(work.dst);
        const std::vector<Job> jobs = filters_.jobs(src, dst);
        const auto step_name = [&](std::size_t i) { return filters_.part_name(i); };
        const std::string& input = work.report.input;
        work.as_one_filter = false;
        if (requested_) {
            if (one_filter_step(*requested_, jobs, filters_.composed())) {
                work.backend = requested_;
                work.backends = {requested_};
                work.as_one_filter = true;
                return;
            }
            for (std::size_t i = 0; i < jobs.size(); ++i) {
                const Support support = requested_->can_run(jobs[i]);
                if (!support.ok) {
                    throw UsageError(fmt::format("{}: variant {} cannot run {}: {}", input,
                                                 requested_->name(), step_name(i), support.reason));
                }
            }
            work.backend = requested_;
            work.backends.assign(jobs.size(), requested_);
            return;
        }
        std::lock_guard<std::mutex> lock(choice_mutex_);
        if (const std::optional<Job> one = filters_.one_filter_job(src, dst)) {
            const AutoChoice choice = auto_choice({*one});
            if (choice.backend && runs_as_one_filter(*choice.backend, *one)) {
                announce(choice);
                work.backend = choice.backend;
                work.backends = {choice.backend};
                work.as_one_filter = true;
                return;
            }
        }
        const AutoChoice choice = auto_choice(jobs);
        if (!choice.backend) throw WorkError(fmt::format("{}: {}", input, choice.reason));
        std::vector<AutoChoice> choices{choice};
        std::vector<Backend*> same_side;
        for (Backend* b : candidates_) {
            if (b->uses_cuda() == choice.backend->uses_cuda()) same_side.push_back(b);
        }
        const DeviceContext device = device_.value_or(DeviceContext{false, "not probed"});
        for (std::size_t i = 1; i < jobs.size(); ++i) {
            AutoChoice later = choose_variant(jobs[i], same_side, device);
            if (!later.backend) {
                throw WorkError(fmt::format("{}: {} on {}: {}", input, step_name(i),
                                            choice.backend->uses_cuda() ? "CUDA" : "the CPU",
                                            later.reason));
            }
            choices.push_back(std::move(later));
        }
        work.backends.clear();
        for (const AutoChoice& c : choices) {
            announce(c);
            work.backends.push_back(c.backend);
        }
        work.backend = work.backends.front();
    }

    // Auto's variant for the first of `jobs` (a chain's steps, or its one
    // filter): the CPU for one image where the CPU's runs cost less than
    // CUDA's start-up and transfers, else the first candidate by rank that
    // can run it. Its backend is nullptr where none can. Under choice_mutex_.
    AutoChoice auto_choice(const std::vector<Job>& jobs) {
        if (one_image_cpu_) {
            // CUDA was not started while the image decoded: none of its
            // start-up is hidden now.
            AutoChoice choice =
                cpu_for_one_image(jobs, candidates_, cpu_threads(), filter_runs(), 0.0);
            if (choice.backend) return choice;
        }
        if (!device_) device_ = device_context(candidates_);
        return choose_variant(jobs.front(), candidates_, *device_);
    }

    // Auto's choice in the log at -v: once per variant, not once per image
    // of a batch. Under choice_mutex_.
    void announce(const AutoChoice& choice) {
        if (announced_.insert(choice.backend).second) {
            progress_->log_above(
                fmt::format("auto: {} ({})", choice.backend->name(), choice.reason),
                spdlog::level::debug);
        }
    }

    // The image's jobs from its input to its output: the chain's steps, or
    // its one filter's where it runs as one (work.as_one_filter). Built
    // again here, not kept from choose_variants: a job views the input's
    // pixels, which move between the two (into a page-locked slot, or
    // decoded by the CPU where nvJPEG did not).
    std::vector<Job> jobs_of(ImageWork& work) const {
        const ConstImageView src = work.input_view();
        const ImageView dst = view_of(work.dst);
        if (work.as_one_filter) return {*filters_.one_filter_job(src, dst)};
        return filters_.jobs(src, dst);
    }

    std::unique_ptr<WorkItem> decode(std::size_t index) {
        const PlannedImage& image = plan_[index];
        auto work = std::make_unique<ImageWork>();
        work->input_index = index;
        work->report.started = Clock::now();
        work->target = image.target;
        ImageReport& report = work->report;
        report.input = display(image.source.path);
        report.output = image.target.path == kStdStream ? "<stdout>" : image.target.path;

        read_input(*work, image.source.path);
        report.decode_ms = ms_since(report.started);
        const ConstImageView in = work->input_view();
        const Depth in_depth = in.depth;
        const Depth out_depth = out_depth_.value_or(in_depth);
        // A JPEG output takes RGBA and 16-bit images converted (io/jpeg_fit.hpp);
        // an explicit --depth u16 to JPEG was refused by the plan.
        const JpegFit fit = is_jpeg_extension(image.target.extension)
                                ? jpeg_fit(in.channels, out_depth)
                                : JpegFit{};
        if (per_filter_) work->filter_targets = filter_targets_[index];
        try {
            for (const OutputTarget& target : targets_of(*work)) {
                check_output_format(target.path, target.extension,
                                    fit.scales_16_bit ? Depth::u8 : out_depth,
                                    fit.flattens_alpha ? 3 : written_channels(in.channels));
            }
        } catch (const UsageError& e) {
            throw WorkError(e.what());  // this input's problem: the batch goes on
        }
        if (fit.converts()) note_jpeg_fit(report.input, fit);
        report.width = report.out_width = in.width;
        report.height = report.out_height = in.height;
        report.channels = in.channels;
        report.in_depth = in_depth;
        report.out_depth = out_depth;
        if (filters_.none()) {
            work->dst = work->src;
            report.filter = report.variant = kNoFilter;
            return work;
        }

        work->premultiplied = options_.alpha == "premultiply" && in.channels == 4;
        const Size2D size = filters_.output_size(in.width, in.height);
        const Size2D reach = filters_.reach();
        if (size.width <= 0 || size.height <= 0) {
            throw WorkError(fmt::format(
                "{}: the {}x{} image is smaller than the {}x{} {}, so --border valid "
                "leaves no output",
                report.input, in.width, in.height, reach.width, reach.height,
                filters_.is_bank() || filters_.size() == 1 ? "filter"
                                                           : "reach of the chain's filters"));
        }
        const int dst_type =
            work->premultiplied ? CV_32FC4 : cv_type_of(out_depth, written_channels(in.channels));
        work->dst =
            prefaulted_.take(static_cast<int>(size.height), static_cast<int>(size.width), dst_type);
        if (work->dst.empty()) {
            const auto make_output = [&] {
                return cv::Mat(static_cast<int>(size.height), static_cast<int>(size.width),
                               dst_type);
            };
            work->dst =
                reporting_out_of_memory(report.input, shape_of(in), read_options_, make_output);
        }
        if (work->premultiplied) {  // src becomes float32 premultiplied: `in` no longer views it
            work->input_max = depth_max(in_depth);
            work->src = reporting_out_of_memory(report.input, shape_of(in), read_options_,
                                                [&] { return premultiplied(work->src); });
        }
        if (choose_later()) {
            work->choose_on_gpu_thread = work->on_gpu = true;
        } else {
            choose_variants(*work);
            work->on_gpu = work->backend->uses_cuda();
        }
        if (work->gpu && !work->on_gpu) decode_on_cpu(*work);  // auto chose a CPU variant
        if (work->on_gpu && png_rows_on_device(*work)) {
            work->png_rows.emplace();
            work->png_rows->sample_rows = png_sample_rows(work->dst.rows);
        } else if (work->on_gpu && jpeg_on_device(*work)) {
            work->jpeg.emplace();
            work->jpeg->settings = encode_.jpeg;
        } else if (work->on_gpu) {
            // The GPU copies the result straight into dst (staged by the
            // driver). Its pages are touched here, on a worker, so that the
            // one GPU thread does not take the page faults of a fresh
            // allocation (9000 for 12 megapixels of RGB). On memory the heap
            // reuses (heap_reuse.hpp), next to nothing, where clearing all 36
            // MB would cost a worker 3-5 ms.
            touch_pages(work->dst);
        }
        // A variant may name itself differently in the output path ({kernel}).
        if (options_.kernel == "auto" && names_kernel()) retarget(*work, image);
        if (per_filter_) {
            for (const OutputTarget& target : targets_of(*work)) {
                report.outputs.push_back(target.path);
            }
            report.output = report.outputs.front();
        }
        if (work->backend) report.variant = variant_label(work->backends);
        report.filter = filters_.label();
        report.filter_width = static_cast<int>(reach.width);
        report.filter_height = static_cast<int>(reach.height);
        report.out_width = work->dst.cols;
        report.out_height = work->dst.rows;
        return work;
    }

    // Reads the input, and decodes it here unless the GPU will (--decoder).
    void read_input(ImageWork& work, const std::string& path) {
        EncodedImage encoded = read_encoded_image(path, read_options_);
        if (!options_.strip) {
            work.metadata = read_metadata(encoded.bytes.data(), encoded.bytes.size());
            if (encoded.orientation != kUpright) mark_upright(work.metadata);  // turned on decoding
        }
        if (!gpu_decode_) {
            work.src = decode_image(encoded, read_options_);
            return;
        }
        std::string why_not;
        std::optional<JpegInspection> inspection = gpu_decoding_.take(encoded, why_not);
        if (!inspection) {
            work.src = decode_image(encoded, read_options_);
            if (options_.decoder == "gpu") warn_cpu_decoded(work.report.input, why_not);
            return;
        }
        work.encoded = std::move(encoded);
        work.gpu.emplace();
        work.gpu->data = work.encoded->bytes.data();
        work.gpu->size = work.encoded->bytes.size();
        work.gpu->inspection = std::move(*inspection);
    }

    // On the thread before the GPU thread: the JPEGs among `items`,
    // decoded together (batch/gpu_decoding.hpp); each image's decode time
    // is its share of the group's.
    void decode_on_gpu(const std::vector<WorkItem*>& items) {
        std::vector<GpuJpegImage*> images;
        std::vector<ImageWork*> works;
        for (WorkItem* item : items) {
            auto& work = static_cast<ImageWork&>(*item);
            if (!work.gpu) continue;
            images.push_back(&*work.gpu);
            works.push_back(&work);
        }
        if (images.empty()) return;
        const auto start = Clock::now();
        const std::size_t lane = items.front()->lane;
        gpu_decoding_.decode_group(lane, images);
        const double share = ms_since(start) / static_cast<double>(images.size());
        const std::string decoder = gpu_decoding_.decoder_name(lane);
        for (ImageWork* work : works) {
            work->report.decode_ms += share;
            work->report.decoder = decoder;  // "cpu" where the lane's decoder could not start
        }
    }

    // An RGBA or 16-bit image written as JPEG: said once a run, at info
    // (the output differs from what the filter made), naming the first.
    void note_jpeg_fit(const std::string& input, const JpegFit& fit) {
        if (jpeg_fit_noted_.exchange(true)) return;
        progress_->log_above(fmt::format("{}: written as JPEG with {} (.png keeps them){}", input,
                                         fit.what(options_.background),
                                         plan_.size() > 1 ? "; others like it are too" : ""),
                             spdlog::level::info);
    }

    // A JPEG meant for the GPU decoded by the CPU after all: nvJPEG could
    // not decode it (a corrupt file, no room on the device), and the CPU
    // decoder's word on it is the one reported; or auto ran it on the CPU.
    void decode_on_cpu(ImageWork& work) {
        const ConstImageView meant = work.input_view();
        const std::string why = !work.gpu->error.empty() ? work.gpu->error
                                : !work.backend->uses_cuda()
                                    ? fmt::format("auto ran it on {}", work.backend->name())
                                    : std::string("nvJPEG did not decode it");
        spdlog::debug("{}: {}; decoding it on the CPU", work.report.input, why);
        if (options_.decoder == "gpu") warn_cpu_decoded(work.report.input, why);
        const auto start = Clock::now();
        cv::Mat src = decode_image(*work.encoded, read_options_);
        if (src.cols != meant.width || src.rows != meant.height ||
            src.channels() != meant.channels || depth_of(src) != Depth::u8) {
            throw WorkError(fmt::format("{}: the CPU decoder made a {}x{} image of {} channels "
                                        "where nvJPEG read {}x{} of {} channels",
                                        work.report.input, src.cols, src.rows, src.channels(),
                                        meant.width, meant.height, meant.channels));
        }
        work.src = std::move(src);
        work.gpu.reset();
        work.encoded.reset();
        work.report.decoder = "cpu";
        work.report.decode_ms += ms_since(start);
    }

    // --decoder gpu, and the CPU decodes this image: said once a run, as
    // warn_cpu_encoded does.
    void warn_cpu_decoded(const std::string& input, const std::string& why) {
        if (cpu_decoded_warned_.exchange(true)) return;
        progress_->log_above(fmt::format("--decoder gpu: {}: decoded by the CPU ({}); --json's "
                                         "\"decoder\" tells for each image",
                                         input, why),
                             spdlog::level::info);
    }

    // With -k auto the plan named outputs by "auto"; now the variant is known,
    // so the checks the plan made for every output before any work are made
    // here for this one: not an input, not another image's output, and an
    // existing file skipped, replaced or refused as the options say.
    void retarget(ImageWork& work, const PlannedImage& image) {
        OutputRequest request = output_request(several_inputs_, variant_label(work.backends));
        const OutputSource source{image.source.path, image.source.dir};
        if (!per_filter_) {
            work.target = resolve_output(request, source);
            work.report.output = work.target.path;
            if (!check_retargeted(work.target.path)) throw SkipImage(work.target.path);
            return;
        }
        // A stack's file a filter: skipped when all exist (--skip-existing),
        // as the plan does.
        bool all_kept = true;
        for (std::size_t k = 0; k < filters_.size(); ++k) {
            request.filter = filters_.filters()[k].filter.label;
            OutputTarget target = resolve_output(request, source);
            if (k == 0) work.target = target;
            if (check_retargeted(target.path)) {
                all_kept = false;
            } else {
                target = {};
            }
            work.filter_targets[k] = target;
        }
        if (all_kept) throw SkipImage(work.target.path);
    }

    // One output named once the variant was known: checked as the plan
    // would have, and its folder made. False where it exists and
    // --skip-existing keeps it.
    bool check_retargeted(const std::string& path) {
        try {
            refuse_overwriting_input(path, input_paths_);
        } catch (const UsageError& e) {
            throw WorkError(e.what());  // this image's problem: the batch goes on
        }
        {
            const std::lock_guard<std::mutex> lock(choice_mutex_);
            if (!retargeted_.insert(path).second) {
                throw WorkError(fmt::format(
                    "{}: another output of this batch is that file too ({{kernel}} named it "
                    "only once the variant was known)",
                    path));
            }
        }
        std::error_code ec;
        if (fs::exists(path, ec)) {
            if (existing_ == ExistingOutputs::skip) return false;
            if (existing_ == ExistingOutputs::refuse) {
                throw WorkError(fmt::format("{}: exists already ({{kernel}} named it only once "
                                            "the variant was known); --overwrite replaces it, "
                                            "--skip-existing keeps it",
                                            path));
            }
        }
        const fs::path folder = fs::path(path).parent_path();
        if (!folder.empty()) make_folders(folder.string(), ec);
        return true;
    }

    // Page-locked slots for a GPU batch's uploads (batch/pinned_slots.hpp):
    // by default 3, one on the GPU and two copied ahead, in batches of at
    // least 16 images (making them takes about 30 ms each); --pinned-slots N
    // sets the count, 0 turns them off. None without a CUDA variant to run.
    int pinned_slot_count(std::size_t images) const {
        constexpr int kSlots = 3;
        constexpr std::size_t kLeastImages = 16;
        if (!may_use_cuda()) return 0;
        if (options_.pinned_slots) return *options_.pinned_slots;
        return images >= kLeastImages ? kSlots : 0;
    }

    // An image bound for the GPU thread, copied into a page-locked slot (on
    // the pipeline's thread for it, while the GPU thread runs the images
    // before it); left in ordinary memory when no slot can be had.
    void copy_to_pinned(ImageWork& work, const GracefulStop& stop) {
        if (!work.src.isContinuous() || work.src.empty()) return;
        const std::size_t bytes = work.src.total() * work.src.elemSize();
        PinnedSlots::Lease lease =
            pinned_.at(work.lane)->acquire(bytes, [&] { return stop.requested(); });
        if (!lease) return;
        std::memcpy(lease.data(), work.src.data, bytes);
        work.src = cv::Mat(work.src.rows, work.src.cols, work.src.type(), lease.data());
        work.pinned = std::move(lease);
    }

    // PNG's rows compressed on the device (kernels/codecs/png_deflate.hpp): for a
    // PNG output at level 1 whose samples PNG holds, unless --encoder cpu
    // (to compare with the workers' encoder). A batch of 12-megapixel edge
    // maps spent a third more on encoding than on the photos'
    // (docs/PERFORMANCE.md); here the workers only wrap the stream.
    bool png_rows_on_device(const ImageWork& work) const {
        if (options_.encoder == "cpu" || work.premultiplied || filters_.is_bank()) return false;
        return png_rows_stream_fits(work.target.extension, encode_) &&
               (work.report.out_depth == Depth::u8 || work.report.out_depth == Depth::u16);
    }

    // A JPEG output encoded on the device by nvJPEG (kernels/codecs/jpeg_encoder.hpp),
    // unless --encoder cpu (to compare with, or to keep libjpeg's exact
    // bytes): the CPU's encode of a 12-megapixel image takes a worker
    // 60-70 ms, the GPU's under a millisecond.
    bool jpeg_on_device(const ImageWork& work) const {
        return options_.encoder != "cpu" && !work.premultiplied && !filters_.is_bank() &&
               is_jpeg_extension(work.target.extension) && work.report.out_depth == Depth::u8 &&
               work.dst.channels() != 4;
    }

    void filter(ImageWork& work) {
        if (filters_.none()) return;  // -f none
        if (work.choose_on_gpu_thread) {
            // Usually a CUDA variant; otherwise (no usable device after all,
            // or a job only the CPU runs) it runs here, for the few images
            // decoded before the probe ended.
            choose_variants(work);
            work.report.variant = variant_label(work.backends);
        }
        if (work.gpu && (!work.backend->uses_cuda() || !work.gpu->device_pixels)) {
            decode_on_cpu(work);
        }
        // With several devices, a failure from here on names the device (the
        // message, and its JSON line); the stage that reports it runs on
        // this thread or after it.
        const int device = devices_.size() > 1 && work.backend->uses_cuda() ? device_of(work) : -1;
        failed_on_.at(work.index) = device;
        const std::string on_device = device >= 0 ? fmt::format(" on device {}", device) : "";
        std::vector<Job> jobs = jobs_of(work);
        std::vector<ChainStep> steps;
        for (std::size_t i = 0; i < jobs.size(); ++i) steps.push_back({work.backends[i], jobs[i]});
        for (bool again = false;; again = true) {
            try {
                run_filter(work, jobs, steps);
                break;
            } catch (const UsageError&) {
                throw;
            } catch (const WorkError&) {
                throw;
            } catch (const std::exception& e) {
                std::string message = fmt::format("{}: {}{}: {}", work.report.input,
                                                  variant_label(work.backends), on_device,
                                                  e.what());
                if (!again && device_out_of_memory(e) &&
                    frees_device_for_second_try(work.lane, message)) {
                    continue;
                }
                // With several devices another may take it (batch/pipeline.hpp).
                if (devices_.size() > 1 && device_lost(e)) throw DeviceLost(std::move(message));
                throw WorkError(std::move(message));
            }
        }
        work.src.release();  // the input is no longer needed: memory for the next
        work.pinned.reset();
        work.gpu.reset();
        work.encoded.reset();
    }

    // One run of the image's filter, chain or bank, its timings into
    // work.report.
    void run_filter(ImageWork& work, const std::vector<Job>& jobs, std::vector<ChainStep>& steps) {
        const auto start = Clock::now();
        RunOptions run_options;
        run_options.warmup = options_.warmup;
        run_options.repeat = options_.repeat;
        run_options.stop_repeating = stop_requested_;
        if (work.png_rows) run_options.png_rows = &*work.png_rows;
        if (work.jpeg) run_options.jpeg = &*work.jpeg;
        if (work.gpu) {
            run_options.device_src = work.gpu->device_pixels.get();
            run_options.device_src_pitch = work.gpu->pitch;
        }
        work.report.run = reporting_out_of_memory(
            work.report.input, shape_of(jobs.front().src), read_options_, [&] {
                if (filters_.is_bank()) return run_bank(work, steps, run_options);
                if (work.as_one_filter) {
                    return run_as_one_filter(steps.front(), filters_.size(), run_options);
                }
                return run_chain(steps, run_options);
            });
        work.report.run_ms = ms_since(start);
        if (work.backend->uses_cuda()) work.report.device = device_of(work);
    }

    // An image ran out of device memory on its first try. Where its device
    // runs another GPU thread, the first of the two to ask gives the device
    // to the other (give_device_to_other_lane, which throws DeviceLost
    // with `message`); the other, once that is done, frees what it keeps
    // there too and runs the image again (true). False: the image fails.
    bool frees_device_for_second_try(std::size_t lane, std::string& message) {
        if (takes_giving_up(lane)) give_device_to_other_lane(std::move(message));
        {
            const std::lock_guard<std::mutex> lock(choice_mutex_);
            if (!device_given_up(lane)) return false;
        }
        release_thread_device_memory();
        return true;
    }

    // A bank (--combine): each filter's response into a float32 image of
    // its own (work.responses), on its variant; encode() combines them.
    // The timings are the filters' together.
    RunTimings run_bank(ImageWork& work, std::vector<ChainStep>& steps, const RunOptions& options) {
        RunTimings total;
        work.responses.clear();  // a lost device's, where another device runs it again
        for (ChainStep& step : steps) {
            cv::Mat response(static_cast<int>(step.job.dst.height),
                             static_cast<int>(step.job.dst.width), CV_32FC(step.job.dst.channels));
            step.job.dst = view_of(response);
            add_step_timings(total, run_chain({step}, options), *step.backend, ',');
            work.responses.push_back(std::move(response));
        }
        return total;
    }

    void encode(ImageWork& work) {
        const auto start = Clock::now();
        if (per_filter_) {
            write_each_filter(work);
        } else {
            encode_and_write(work);
        }
        work.report.encode_ms = ms_since(start);
        work.report.total_ms = ms_since(work.report.started);
        work.src.release();
        work.dst.release();
        work.png_rows.reset();
        work.jpeg.reset();
    }

    // A stack written one file a filter: each response finished into dst
    // (--scale, --delta and --abs, the output depth, a kept alpha), as the
    // filter run alone writes it. An input's files are written whole or
    // not at all: every one is encoded, then staged beside its target, and
    // only then are they renamed into place, so a failure before the
    // renames leaves the files there before untouched.
    void write_each_filter(ImageWork& work) {
        const EncodeOptions encode = encode_options(work);
        const int filtered = filters_.filtered_channels(work.responses.front().channels());
        std::vector<std::pair<const OutputTarget*, std::vector<std::uint8_t>>> files;
        for (std::size_t k = 0; k < work.responses.size(); ++k) {
            const OutputTarget& target = work.filter_targets[k];
            if (target.path.empty()) continue;  // it exists, and --skip-existing keeps it
            combine_responses({view_of(std::as_const(work.responses[k]))}, Combine::stack, filtered,
                              options_.scale, options_.delta, options_.take_abs, view_of(work.dst));
            std::vector<std::uint8_t> file =
                encode_image(work.dst, target.extension, encode, target.path);
            files.emplace_back(&target,
                               with_metadata(std::move(file), target.extension, work.metadata));
        }
        work.responses.clear();
        std::vector<StagedFile> staged;
        staged.reserve(files.size());
        for (auto& [target, bytes] : files) {
            staged.emplace_back(target->path, bytes);
            bytes = {};  // on disk now: memory for the next
        }
        for (StagedFile& file : staged) file.commit();
    }

    // The encoding of an input's files: the threads its worker may give
    // it; a stack's one file holds responses, not colours.
    EncodeOptions encode_options(const ImageWork& work) const {
        EncodeOptions encode = encode_;
        encode.threads = std::max(encode.threads, work.encode_threads);
        encode.channels_are_colour = per_filter_ || !filters_.is_stack();
        return encode;
    }

    void encode_and_write(ImageWork& work) {
        if (!work.responses.empty()) {
            // A stack goes to .npy, whose colours are RGB(A): each
            // response's block of channels in that order.
            for (cv::Mat& r : work.responses) {
                if (!filters_.is_stack()) break;
                if (r.channels() == 3) cv::cvtColor(r, r, cv::COLOR_BGR2RGB);
                if (r.channels() == 4) cv::cvtColor(r, r, cv::COLOR_BGRA2RGBA);
            }
            std::vector<ConstImageView> responses;
            for (const cv::Mat& r : work.responses) responses.push_back(view_of(r));
            const int filtered = filters_.filtered_channels(work.responses.front().channels());
            combine_responses(responses, *filters_.combine(), filtered, options_.scale,
                              options_.delta, options_.take_abs, view_of(work.dst));
            work.responses.clear();
        }
        if (work.premultiplied) {
            work.dst = reporting_out_of_memory(
                work.report.input, shape_of(view_of(std::as_const(work.dst))), read_options_,
                [&] { return unpremultiplied(work.dst, work.report.out_depth, work.input_max); });
        }
        const EncodeOptions encode = encode_options(work);
        const bool jpeg_done = work.jpeg && work.jpeg->done;
        work.report.encoder = (work.png_rows && work.png_rows->done) || jpeg_done ? "gpu" : "cpu";
        if (options_.encoder == "gpu" && work.report.encoder != "gpu") warn_cpu_encoded(work);
        std::vector<std::uint8_t> file;
        if (jpeg_done) {
            file = std::move(work.jpeg->file);
        } else if (work.png_rows && work.png_rows->done) {
            file = encode_png_rows_stream(work.dst.cols, work.dst.rows, work.report.out_depth,
                                          work.dst.channels(), work.png_rows->zlib,
                                          work.png_rows->sample, work.target.path);
        } else {
            warn_if_saturated(work);
            file = encode_image(work.dst, work.target.extension, encode, work.target.path);
        }
        write_file_atomically(work.target.path,
                              with_metadata(std::move(file), work.target.extension, work.metadata));
    }

    // An integer output that came out white or black by a likely mistake
    // (batch/saturation.hpp): said once a run, for the first such image.
    // Outputs the GPU encodes never reach host memory and are not looked at.
    void warn_if_saturated(const ImageWork& work) {
        // A bank's gain is not its filters' sums: not told.
        if (filters_.none() || filters_.is_bank() ||
            saturation_warned_.load(std::memory_order_relaxed)) {
            return;
        }
        const int filtered = filters_.filtered_channels(work.dst.channels());
        const std::string problem =
            saturation_problem(work.dst, filtered, filters_.filters(), work.report.in_depth);
        if (problem.empty() || saturation_warned_.exchange(true)) return;
        progress_->log_above(fmt::format("{}: {}", work.report.input, problem),
                             spdlog::level::warn);
    }

    // --encoder gpu, and the CPU encodes this image after all: said once a
    // run, as auto's choice is, for the first such image (--json's
    // "encoder" tells of each).
    void warn_cpu_encoded(const ImageWork& work) {
        if (cpu_encoded_warned_.exchange(true)) return;
        std::string why;
        if (work.backend && !work.backend->uses_cuda()) {
            why = fmt::format("auto ran it on {}", work.backend->name());
        } else if (work.jpeg && !work.jpeg->problem.empty()) {
            why = work.jpeg->problem;
        } else {
            why = "the GPU's encoder could not take it (no room on the device, or rows of 128 MB "
                  "or more)";
        }
        progress_->log_above(fmt::format("--encoder gpu: {}: encoded by the CPU ({}); --json's "
                                         "\"encoder\" tells for each image",
                                         work.report.input, why),
                             spdlog::level::info);
    }

    const FilterOptions& options_;
    FilterSet filters_;  // -f's filter, chain or bank (--combine); none for -f none
    // --combine stack with {filter} in -o: one file a filter, each with the
    // image's channels, instead of one .npy of them all.
    bool per_filter_ = false;
    // Then each input's files, in the filters' order, by plan_ index (an
    // empty path: it exists, and --skip-existing keeps it).
    std::vector<std::vector<OutputTarget>> filter_targets_;
    Backend* requested_ = nullptr;
    std::optional<Depth> out_depth_;
    std::vector<Backend*> candidates_;
    ExistingOutputs existing_ = ExistingOutputs::refuse;
    std::vector<PlannedImage> plan_;
    std::vector<std::string> input_paths_;

    // The batch's GracefulStop, while run() runs: Ctrl-C ends --repeat's
    // runs too (RunOptions::stop_repeating).
    std::function<bool()> stop_requested_;
    std::mutex choice_mutex_;
    // -k auto on a single image that the CPU should finish before CUDA could
    // start (its header's size): CUDA is not warmed up, and cpu_for_one_image
    // decides once the image is decoded.
    bool one_image_cpu_ = false;
    std::atomic<bool> jpeg_fit_noted_{false};     // note_jpeg_fit has spoken
    std::atomic<bool> saturation_warned_{false};  // warn_if_saturated has spoken
    Rgb8 background_ = kWhite;                    // --background
    std::optional<Shard> shard_;                  // --shard K/N
    bool several_inputs_ = false;                 // the inputs, all shards', are more than one
    EncodeOptions encode_;  // options_.encode, with the threads this run gives encoding
    std::optional<DeviceContext> device_;
    // A GPU batch's upload slots, a set for each lane.
    std::vector<std::unique_ptr<PinnedSlots>> pinned_;
    DeviceRequest devices_request_;  // --devices
    // The devices the batch filters on, by CUDA's numbers, each with one
    // or two lanes (GPU threads: lane_device); empty: the first device
    // there is.
    std::vector<int> devices_;
    std::set<int> left_devices_;  // devices left_lane has named
    // Under choice_mutex_: the lanes that entered and have not been left
    // out, and those that gave their device to its other lane
    // (give_device_to_other_lane).
    std::set<std::size_t> lanes_running_;
    std::set<std::size_t> lanes_out_of_memory_;
    // By the pipeline's index: the device an image ran on where the batch
    // has several, for its failed line (-1: none, or one device).
    std::vector<int> failed_on_;
    std::set<Backend*> announced_;
    std::atomic<bool> cpu_encoded_warned_{false};  // warn_cpu_encoded's once
    std::atomic<bool> cpu_decoded_warned_{false};  // warn_cpu_decoded's once
    GpuDecoding gpu_decoding_;                     // --decoder's GPU side
    bool gpu_decode_ = false;                      // whether JPEGs go to the GPU's decoder this run
    std::set<std::string> retargeted_;             // outputs named once the variant was known
    BatchProgress* progress_ = nullptr;
    CudaWarmup warmup_;
    PrefaultedOutput prefaulted_;  // a single image's output, for a CPU variant
    bool prefault_ = false;        // made once the image's header passed the checks
    ReadOptions read_options_;     // --max-pixels, the memory check, the stop request
};

}  // namespace

int run_filter_command(const FilterOptions& options) {
    if (!options.weights.empty()) return run_layer_command(options);
    check_layer_options_need_weights(options);
    if (options.filter_specs.empty()) {
        throw UsageError("--filter is required: -f FILTER (see 'cudaconv list filters'), or "
                         "--weights W.npy for a convolution layer");
    }
    if (!keep_freed_buffers_in_heap()) {  // first: before any thread
        spdlog::debug("the C library refused the heap settings that keep freed images for reuse");
    }
    start_opencv_pool();  // before the batch's threads take what the system gives
    return FilterCommand(options).run();
}

}  // namespace cudaconv
