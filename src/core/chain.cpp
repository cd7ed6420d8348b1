#include "core/chain.hpp"

#include <algorithm>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include <fmt/format.h>

namespace cudaconv {
ImageView float32_view(std::int64_t width, std::int64_t height, int channels) {
    ImageView v;
    v.width = width;
    v.height = height;
    v.channels = channels;
    v.depth = Depth::f32;
    v.row_bytes = static_cast<std::int64_t>(v.packed_row_bytes());
    return v;
}

std::string chain_label(const std::vector<ConvParams>& steps) {
    std::string label;
    for (const ConvParams& p : steps) label += (label.empty() ? "" : "+") + p.filter.label;
    return label;
}

Size2D chain_output_size(std::int64_t width, std::int64_t height,
                         const std::vector<ConvParams>& steps) {
    Size2D size{width, height};
    for (const ConvParams& p : steps) size = output_size(size.width, size.height, p);
    return size;
}

std::vector<Job> chain_jobs(const ConstImageView& src, const ImageView& dst,
                            const std::vector<ConvParams>& steps) {
    std::vector<Job> jobs;
    jobs.reserve(steps.size());
    ConstImageView in = src;
    for (std::size_t i = 0; i < steps.size(); ++i) {
        Job job;
        job.src = in;
        job.params = steps[i];
        if (i + 1 == steps.size()) {
            job.dst = dst;
        } else {
            const Size2D size = output_size(in.width, in.height, steps[i]);
            job.dst = float32_view(size.width, size.height, src.channels);
        }
        in = cudaconv::as_const(job.dst);
        jobs.push_back(std::move(job));
    }
    return jobs;
}

RunTimings run_chain(const std::vector<ChainStep>& steps, const RunOptions& options) {
    if (steps.empty()) throw std::invalid_argument("run_chain: a chain of no steps");
    if (steps.size() == 1) return steps.front().backend->run(steps.front().job, options);
    const bool on_cuda = steps.front().backend->uses_cuda();
    for (const ChainStep& step : steps) {
        if (step.backend->uses_cuda() != on_cuda) {
            throw std::invalid_argument(
                fmt::format("a chain runs on the CPU or on CUDA, not both: {} and {}",
                            steps.front().backend->name(), step.backend->name()));
        }
    }
    if (on_cuda) {
        RunOptions chained = options;
        chained.later_steps.assign(steps.begin() + 1, steps.end());
        return steps.front().backend->run(steps.front().job, chained);
    }

    // On the host: each step into a float32 image of its own, freed once
    // the next step has read it.
    RunTimings total;
    std::unique_ptr<float[]> previous;  // what the step reads, when not the input
    ConstImageView in = steps.front().job.src;
    for (std::size_t i = 0; i < steps.size(); ++i) {
        Job job = steps[i].job;
        job.src = in;
        std::unique_ptr<float[]> out;
        if (i + 1 < steps.size()) {
            const std::size_t samples = static_cast<std::size_t>(job.dst.width) *
                                        static_cast<std::size_t>(job.dst.height) *
                                        static_cast<std::size_t>(job.dst.channels);
            out.reset(new float[samples]);
            job.dst.data = reinterpret_cast<std::byte*>(out.get());
        }
        add_step_timings(total, steps[i].backend->run(job, options), *steps[i].backend, '+');
        in = cudaconv::as_const(job.dst);
        previous = std::move(out);
    }
    return total;
}

void add_step_timings(RunTimings& total, const RunTimings& step, const Backend& backend,
                      char separator) {
    const bool first = total.path.empty();  // every step adds a name
    total.upload_ms += step.upload_ms;
    total.download_ms += step.download_ms;
    if (first) {
        total.filter_ms = step.filter_ms;
    } else {
        // A step stopped early (Ctrl-C) ran fewer times: the whole ran as
        // often as its least step.
        total.filter_ms.resize(std::min(total.filter_ms.size(), step.filter_ms.size()));
        for (std::size_t r = 0; r < total.filter_ms.size(); ++r) {
            total.filter_ms[r] += step.filter_ms[r];
        }
        total.path += separator;
    }
    total.path += step.path.empty() ? std::string(backend.name()) : step.path;
}

}  // namespace cudaconv
