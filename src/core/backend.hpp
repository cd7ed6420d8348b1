#pragma once
// The one interface every variant implements (cpu-ref, the CUDA ladder,
// the fast path), after CUTLASS's Operation: describe, can_run, run.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/job.hpp"
#include "core/jpeg_settings.hpp"
#include "core/tolerance.hpp"
#include "core/tuning.hpp"

namespace cudaconv {

// Whether a variant can run a job, and if not, why, in words for the user.
struct Support {
    bool ok = true;
    std::string reason;

    static Support yes() { return {true, {}}; }
    static Support no(std::string why) { return {false, std::move(why)}; }
};

// A CUDA variant's output as PNG's compressed rows instead of pixels
// (kernels/codecs/png_deflate.hpp): what a batch writing PNGs asks for, so that the
// workers only wrap the stream in chunks (io/png_encoder.hpp). A variant
// that cannot leaves `done` false and fills job.dst as usual.
struct PngRowsRequest {
    std::vector<int> sample_rows;  // rows to return filtered too (png_sample_rows)
    // Set by the variant:
    bool done = false;                 // then job.dst was not written
    std::vector<std::uint8_t> zlib;    // IDAT's zlib stream
    std::vector<std::uint8_t> sample;  // the sample rows, each after its filter byte
};

// A CUDA variant's output as a JPEG file, encoded on the device by nvJPEG
// (kernels/codecs/jpeg_encoder.hpp): what a batch writing JPEGs asks for, so
// that the workers only write the file. A variant that cannot (no nvJPEG,
// an output JPEG does not hold, no room on the device) leaves `done` false
// and fills job.dst as usual.
struct JpegRequest {
    JpegSettings settings;
    // Set by the variant:
    bool done = false;               // then job.dst was not written
    std::vector<std::uint8_t> file;  // the whole JPEG file
    std::string problem;             // when not done: why not, in words
};

class Backend;

// One step of a filter chain (core/chain.hpp): the variant that runs it and
// its job.
struct ChainStep {
    Backend* backend = nullptr;
    Job job;
};

struct RunOptions {
    int warmup = 0;  // untimed filter runs before the timed ones
    int repeat = 1;  // timed filter runs; the output is from the last
    // CUDA variants: launch i reads and writes copy i % k of the input and
    // output, k copies spanning at least this many bytes, so that no launch
    // finds its input in the L2 the one before left warm (as CUTLASS's
    // profiler does). 0 keeps one copy. CPU variants ignore it.
    std::size_t rotate_bytes = 0;
    // CUDA variants: compress the output for a PNG on the device and return
    // that instead (nullptr: download the pixels). CPU variants ignore it.
    PngRowsRequest* png_rows = nullptr;
    // CUDA variants: encode the output as a JPEG file on the device and
    // return that instead (nullptr: download the pixels). At most one of
    // png_rows and jpeg is set. CPU variants ignore it.
    JpegRequest* jpeg = nullptr;
    // CUDA variants: the input's pixels are on the device already, rows of
    // job.src's packed row bytes `device_src_pitch` apart (a JPEG decoded
    // there, kernels/codecs/jpeg_batch.hpp): copied from there in place of
    // the upload, and job.src.data is not read. CPU variants refuse it.
    const std::byte* device_src = nullptr;
    std::size_t device_src_pitch = 0;
    // CUDA variants: queue each timed run after the first launch behind a
    // kernel that holds the stream until the host has queued it
    // (kernels/runtime/stream_hold.hpp), so that its time is the device's alone.
    // The first launch of a run is never held: it may load kernels and
    // build plans, which wait on the device. CPU variants ignore it.
    bool hold_timed_launches = false;
    // CUDA variants: the steps of a filter chain after this run's own
    // (core/chain.hpp), each on a CUDA variant, run on the device after
    // it: job.dst and each step's images but the last are placed on the
    // device, and the last step's job.dst is the output (pixels, png_rows or
    // jpeg as for one step). Each timed filter run is the whole chain's. Set
    // by run_chain only; CPU variants never get it.
    std::vector<ChainStep> later_steps;
    // Values for the variant's tuning parameters (Backend::tuning_params)
    // in place of its rules' choices: bench --param, and the tests.
    Tuning tuning;
    // Asked before each filter run after the first: true (Ctrl-C) ends the runs
    // early, after one timed run at least, and the output is from the last
    // run done (every run computes the same). Unset: all of them.
    std::function<bool()> stop_repeating;
};

// What a run measured, in milliseconds. CUDA variants time with events;
// CPU variants with a steady clock. Upload/download stay 0 on the CPU.
struct RunTimings {
    double upload_ms = 0.0;
    double download_ms = 0.0;  // the pixels; 0 when png_rows or jpeg took their place
    // CUDA variants asked for RunOptions::png_rows: compressing on the
    // device and downloading the stream.
    double png_rows_ms = 0.0;
    // CUDA variants asked for RunOptions::jpeg: encoding on the device and
    // downloading the file.
    double gpu_jpeg_ms = 0.0;
    std::vector<double> filter_ms;  // one entry per timed repeat
    // The named path that ran, for a composite variant (`fast` ran
    // "fast.strips"); empty for the others.
    std::string path;
};

class Backend {
public:
    virtual ~Backend() = default;
    virtual std::string_view name() const = 0;
    virtual std::string_view summary() const = 0;  // one line for `list kernels`
    virtual bool uses_cuda() const = 0;
    // The composite variant this one is a named path of ("fast" for
    // "fast.strips"), which picks it for the jobs it suits; empty for a
    // variant of its own.
    virtual std::string_view parent() const { return {}; }
    // Where `-k auto` tries this variant for `job`: lower ranks first
    // (core/auto_select.hpp has the measured order); none for a variant
    // auto never picks by itself (a named path: its composite picks it).
    virtual std::optional<int> auto_rank(const Job& job) const = 0;
    // How far its output may be from the exact result (docs/SPEC.md
    // "Tolerances"): the float32 summation bound unless it says otherwise.
    virtual Tolerance tolerance(const Job& job) const { return float32_sum_tolerance(job); }
    // The parameters RunOptions::tuning may set (core/tuning.hpp).
    virtual std::vector<TuningParam> tuning_params() const { return {}; }
    // Cheap and side-effect free; for CUDA variants may probe the device.
    virtual Support can_run(const Job& job) const = 0;
    // Milliseconds one run of `job` should take on `threads` host threads,
    // by the variant's cost model, for auto's one-image rule
    // (core/auto_select.hpp); none where it has no model. Reads the job's
    // sizes and parameters only, never its pixels.
    virtual std::optional<double> estimated_ms(const Job& /*job*/, unsigned /*threads*/) const {
        return std::nullopt;
    }
    // Whether a chain whose steps equal one rank-1 filter runs as that filter
    // here (core/chain_compose.hpp), `one` the job of that filter: true where
    // the variant runs it in time that grows with its side, not its area (two
    // passes, or FFT), or that is bound by memory, not taps (fast's 3x3 to
    // 7x7 paths), so that one pass of the longer filter costs less than a
    // pass a step. Asked only of a job can_run takes.
    virtual bool runs_composed_chains(const Job& /*one*/) const { return false; }
    // Filters job.src into job.dst (host memory). Throws on failure.
    virtual RunTimings run(const Job& job, const RunOptions& options) = 0;
};

}  // namespace cudaconv
