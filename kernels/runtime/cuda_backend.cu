#include "kernels/runtime/cuda_backend.hpp"

#include <algorithm>
#include <cstring>
#include <deque>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/chain_compose.hpp"
#include "kernels/runtime/chain_edges.hpp"
#include "kernels/runtime/cuda_check.hpp"
#include "kernels/runtime/cuda_host.hpp"
#include "kernels/runtime/cuda_resources.hpp"
#include "kernels/runtime/device_scope.hpp"
#include "kernels/codecs/jpeg_encoder.hpp"
#include "kernels/codecs/png_deflate.hpp"
#include "kernels/runtime/stream_hold.hpp"

namespace cudaconv {
namespace {

double elapsed_ms(const Event& start, const Event& stop) {
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    return ms;
}

// Device rows start on 16-byte boundaries, so that kernels may load and
// store whole 16-byte vectors (fast.cu); at most 15 bytes a row of padding.
constexpr std::size_t kRowAlignment = 16;

std::size_t device_pitch(std::size_t row_bytes) {
    return (row_bytes + kRowAlignment - 1) / kRowAlignment * kRowAlignment;
}

std::size_t image_bytes(std::int64_t width, std::int64_t height, int channels, Depth depth) {
    return device_pitch(static_cast<std::size_t>(width) * static_cast<std::size_t>(channels) *
                        depth_bytes(depth)) *
           static_cast<std::size_t>(height);
}

// The device bytes every CUDA run needs: input, output and taps.
std::size_t base_device_bytes(const Job& job) {
    return image_bytes(job.src.width, job.src.height, job.src.channels, job.src.depth) +
           image_bytes(job.dst.width, job.dst.height, job.dst.channels, job.dst.depth) +
           job.params.filter.taps.size() * sizeof(float);
}

// Leave room for the context, cuFFT/cuDNN workspaces and other processes.
constexpr double kUsableMemoryShare = 0.85;
// Rotated copies may take at most this share of the device, and never more
// than can_run's budget leaves: rotation must not make a job fail that
// runs without it.
constexpr double kRotationMemoryShare = 0.25;

// Device bytes the rotated copies may take for this job.
std::size_t rotation_spare_bytes(std::size_t job_bytes, const DeviceInfo& device) {
    const double total = static_cast<double>(device.global_memory_bytes);
    const double left = kUsableMemoryShare * total - static_cast<double>(job_bytes);
    const double spare = std::min(kRotationMemoryShare * total, left);
    return spare > 0.0 ? static_cast<std::size_t>(spare) : 0;
}

// ---- Buffers kept between runs (issue 6: batches) -------------------------
// A batch filters image after image of one size on one thread. Allocating
// device memory for each image, and freeing it (cudaFree synchronises the
// device), cost more than a 4000x3000 upload; so each thread keeps its last
// device input/output buffers and reuses them
// for a run of the same byte sizes, and replaces them otherwise (a cache of
// exact sizes never holds more than one job needs, so can_run's memory
// budget stays true). Thread-local: runs on other threads never share them.
struct RunBuffers {
    std::size_t src_bytes = 0;
    std::size_t dst_bytes = 0;
    DeviceArray<std::byte> d_src{nullptr};
    DeviceArray<std::byte> d_dst{nullptr};
    // A filter chain's images between steps (RunOptions::later_steps): one,
    // or two that the steps take turns writing, of the first (largest) one's
    // bytes.
    std::size_t between_bytes = 0;
    std::vector<DeviceArray<std::byte>> d_between;
    // Each step's taps (the run's own first, then a chain's later steps),
    // and the values they hold: a batch's images upload them once. Freeing
    // them after each image would wait for the whole device, and copying
    // them from ordinary memory would wait behind the GPU JPEG decoder's
    // copies (both go through the driver's shared staging).
    std::vector<DeviceArray<float>> d_taps;
    std::vector<std::vector<float>> taps_held;
};

thread_local RunBuffers t_buffers;

RunBuffers& run_buffers(std::size_t src_bytes, std::size_t dst_bytes) {
    RunBuffers& buffers = t_buffers;
    if (buffers.src_bytes != src_bytes || buffers.dst_bytes != dst_bytes || !buffers.d_src) {
        buffers = RunBuffers{};  // free the old ones first: the device may be nearly full
        buffers.d_src = device_array<std::byte>(src_bytes);
        buffers.d_dst = device_array<std::byte>(dst_bytes);
        buffers.src_bytes = src_bytes;
        buffers.dst_bytes = dst_bytes;
    }
    return buffers;
}

// The kept buffers between a chain's steps: `count` of `bytes` each.
std::vector<DeviceArray<std::byte>>& between_buffers(std::size_t count, std::size_t bytes) {
    RunBuffers& buffers = t_buffers;
    if (buffers.d_between.size() != count || buffers.between_bytes != bytes) {
        buffers.d_between.clear();  // free the old ones first
        for (std::size_t i = 0; i < count; ++i) {
            buffers.d_between.push_back(device_array<std::byte>(bytes));
        }
        buffers.between_bytes = bytes;
    }
    return buffers.d_between;
}
// Step `step`'s taps on the device, in a kept buffer: copied there on
// `stream` unless it holds them already.
const float* device_taps(std::size_t step, const std::vector<float>& taps, cudaStream_t stream) {
    RunBuffers& buffers = t_buffers;
    if (buffers.d_taps.size() <= step) {
        buffers.d_taps.resize(step + 1);
        buffers.taps_held.resize(step + 1);
    }
    std::vector<float>& held = buffers.taps_held[step];
    if (buffers.d_taps[step] && held == taps) return buffers.d_taps[step].get();
    if (!buffers.d_taps[step] || held.size() < taps.size()) {
        buffers.d_taps[step] = DeviceArray<float>{nullptr};  // free the old one first
        buffers.d_taps[step] = device_array<float>(taps.size());
    }
    held.clear();  // until the copy is queued
    CUDA_CHECK(cudaMemcpyAsync(buffers.d_taps[step].get(), taps.data(), taps.size() * sizeof(float),
                               cudaMemcpyHostToDevice, stream));
    held = taps;
    return buffers.d_taps[step].get();
}

// A run that throws may leave copies or kernels queued on its stream that
// still read or write the kept buffers, and the next run of the same sizes
// would reuse them at once: so on the way out of a failed run, wait for the
// stream and let the buffers go (freed, so a run of other sizes starts clean).
class KeptBuffersGuard {
public:
    explicit KeptBuffersGuard(cudaStream_t stream)
        : stream_(stream), uncaught_(std::uncaught_exceptions()) {}
    KeptBuffersGuard(const KeptBuffersGuard&) = delete;
    KeptBuffersGuard& operator=(const KeptBuffersGuard&) = delete;
    ~KeptBuffersGuard() {
        if (std::uncaught_exceptions() > uncaught_) {
            cudaStreamSynchronize(stream_);  // errors ignored: already failing
            t_buffers = RunBuffers{};
        }
    }

private:
    cudaStream_t stream_;
    int uncaught_;
};
// ---------------------------------------------------------------------------

// The run's result on the device, as the device encoders take it.
DeviceImageRows result_rows(const ImageView& out, const std::byte* d_result, std::size_t dst_row) {
    DeviceImageRows rows;
    rows.data = d_result;
    rows.width = out.width;
    rows.height = out.height;
    rows.pitch = static_cast<std::int64_t>(dst_row);
    rows.channels = out.channels;
    rows.depth = out.depth;
    return rows;
}

// The output as PNG's compressed rows (RunOptions::png_rows), where PNG
// holds its samples; false, with the request untouched, where it does not
// or the device had no room for the encoder's buffers (the pixels are
// downloaded instead).
bool compress_for_png(const ImageView& out, const std::byte* d_result, std::size_t dst_row,
                      PngRowsRequest& request, RunTimings& timings, cudaStream_t stream) {
    if (!png_rows_on_device_supported(out.width, out.channels, out.depth)) return false;
    const DeviceImageRows rows = result_rows(out, d_result, dst_row);
    const Event start, stop;
    CUDA_CHECK(cudaEventRecord(start.get(), stream));
    DevicePngStream compressed;
    try {
        compressed = compress_png_rows(rows, request.sample_rows, stream);
    } catch (const CudaError& e) {
        // Out of memory is not sticky: free what the encoder kept and
        // download the pixels. Any other error shows again at the download.
        release_png_rows_buffers();
        if (e.status() != cudaErrorMemoryAllocation) throw;
        cudaGetLastError();  // clears it
        return false;
    }
    CUDA_CHECK(cudaEventRecord(stop.get(), stream));
    CUDA_CHECK(cudaEventSynchronize(stop.get()));
    request.zlib = std::move(compressed.zlib);
    request.sample = std::move(compressed.sample);
    request.done = true;
    timings.png_rows_ms = elapsed_ms(start, stop);
    return true;
}

// The output as a JPEG file encoded on the device (RunOptions::jpeg);
// false, with `request.problem` saying why, where the encoder cannot take
// it or nvJPEG failed (the pixels are downloaded and the CPU encodes them;
// a fault of the device itself shows again at that download).
bool encode_for_jpeg(const ImageView& out, const std::byte* d_result, std::size_t dst_row,
                     JpegRequest& request, RunTimings& timings, cudaStream_t stream) {
    request.problem = jpeg_on_device_problem(out.width, out.height, out.channels, out.depth);
    if (!request.problem.empty()) return false;
    const DeviceImageRows rows = result_rows(out, d_result, dst_row);
    const Event start, stop;
    CUDA_CHECK(cudaEventRecord(start.get(), stream));
    try {
        request.file = encode_jpeg_on_device(rows, request.settings, stream);
    } catch (const CudaError& e) {
        release_jpeg_encoder();
        cudaGetLastError();  // clears an error that is not the device's fault
        request.problem = e.what();
        return false;
    }
    CUDA_CHECK(cudaEventRecord(stop.get(), stream));
    CUDA_CHECK(cudaEventSynchronize(stop.get()));
    request.done = true;
    timings.gpu_jpeg_ms = elapsed_ms(start, stop);
    return true;
}

// Zeroes the bytes between each row's end and its pitch (DeviceJob's
// pitches), which copies and kernels leave alone.
template <typename View>
void clear_row_padding(std::byte* rows, std::size_t pitch, const View& image, cudaStream_t stream) {
    const std::size_t used = image.packed_row_bytes();
    if (pitch <= used) return;
    CUDA_CHECK(cudaMemset2DAsync(rows + used, pitch, 0, pitch - used,
                                 static_cast<std::size_t>(image.height), stream));
}

// Whether filter run `i` of `launch_count` (--warmup plus --repeat) goes
// ahead: once RunOptions::stop_repeating says stop (Ctrl-C), none does
// after a timed one, and from the warm-up `i` jumps to the one timed run.
bool runs_again(int& i, int launch_count, const RunOptions& options, const RunTimings& timings) {
    if (i == 0 || !options.stop_repeating || !options.stop_repeating()) return true;
    if (!timings.filter_ms.empty()) return false;
    i = launch_count - 1;
    return true;
}

// The steps of a chain: the run's own, then RunOptions::later_steps'.
std::vector<ConvParams> chain_params(const Job& job, const RunOptions& options) {
    std::vector<ConvParams> steps{job.params};
    for (const ChainStep& step : options.later_steps) steps.push_back(step.job.params);
    return steps;
}

}  // namespace

std::size_t rotation_copies(std::size_t rotate_bytes, std::size_t pair_bytes,
                            std::size_t spare_bytes) {
    if (rotate_bytes == 0 || pair_bytes == 0) return 1;
    const std::size_t wanted = (rotate_bytes + pair_bytes - 1) / pair_bytes;
    const std::size_t fit = 1 + spare_bytes / pair_bytes;
    return std::max<std::size_t>(1, std::min({wanted, kMaxRotationCopies, fit}));
}

const DeviceInfo& current_device() {
    const DeviceProbe& probe = probe_devices();
    if (probe.devices.empty()) throw CudaError("no CUDA device: " + probe.problem);
    const int wanted = thread_device();
    if (wanted < 0) return probe.devices.front();
    for (const DeviceInfo& device : probe.devices) {
        if (device.index == wanted) return device;
    }
    throw CudaError(
        fmt::format("no CUDA device {} (the probe found {})", wanted, probe.devices.size()));
}

struct ConstantTapsLock::DeviceTaps {
    int device = -1;
    std::mutex mutex;
    // Recorded on the last holder's stream after its launches; made with
    // the device's first holder, kept for the process.
    cudaEvent_t done = nullptr;
    bool recorded = false;
};

ConstantTapsLock::ConstantTapsLock(cudaStream_t stream) : stream_(stream) {
    // One a device: each device has its own copy of the symbols, so runs
    // on two devices do not wait for each other. A deque, so that each
    // stays where it is as devices are added.
    static std::mutex guard;
    static std::deque<DeviceTaps> per_device;
    const int device = current_device().index;
    DeviceTaps* taps = nullptr;
    {
        const std::lock_guard<std::mutex> lock(guard);
        for (DeviceTaps& d : per_device) {
            if (d.device == device) taps = &d;
        }
        if (!taps) {
            taps = &per_device.emplace_back();
            taps->device = device;
        }
    }
    taps->mutex.lock();
    try {
        if (!taps->done) {
            CUDA_CHECK(cudaEventCreateWithFlags(&taps->done, cudaEventDisableTiming));
        }
        if (taps->recorded) CUDA_CHECK(cudaStreamWaitEvent(stream, taps->done, 0));
    } catch (...) {
        taps->mutex.unlock();  // no destructor runs for a constructor that throws
        throw;
    }
    taps_ = taps;
}

ConstantTapsLock::ConstantTapsLock(ConstantTapsLock&& other) noexcept
    : taps_(std::exchange(other.taps_, nullptr)), stream_(other.stream_) {}

ConstantTapsLock& ConstantTapsLock::operator=(ConstantTapsLock&& other) noexcept {
    if (this != &other) {
        release();
        taps_ = std::exchange(other.taps_, nullptr);
        stream_ = other.stream_;
    }
    return *this;
}

void ConstantTapsLock::release() noexcept {
    if (!taps_) return;
    // Where the record fails (a lost device), the next holder waits for
    // nothing: its own copy and launches then fail the same way.
    taps_->recorded = taps_->done && cudaEventRecord(taps_->done, stream_) == cudaSuccess;
    if (!taps_->recorded) cudaGetLastError();  // not left for the next check to find
    taps_->mutex.unlock();
    taps_ = nullptr;
}

void release_thread_device_memory() {
    t_buffers = RunBuffers{};
    release_fft_state();
    release_png_rows_buffers();
    release_jpeg_encoder();
}

int resident_blocks(const void* kernel, int threads, std::size_t shared_bytes) {
    int per_sm = 0;
    CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, shared_bytes));
    return std::max(1, per_sm) * std::max(1, current_device().multiprocessors);
}

DeviceJob device_job_of(const Job& job) {
    DeviceJob dj;
    dj.src_width = job.src.width;
    dj.src_height = job.src.height;
    dj.dst_width = job.dst.width;
    dj.dst_height = job.dst.height;
    dj.channels = job.src.channels;
    dj.filtered_channels = job.filtered_channels();
    dj.in_depth = job.src.depth;
    dj.out_depth = job.dst.depth;
    dj.filter_width = job.params.filter.width;
    dj.filter_height = job.params.filter.height;
    dj.origin_x = origin_x(job.params);
    dj.origin_y = origin_y(job.params);
    dj.centre_x = centre_offset_x(job.params);
    dj.centre_y = centre_offset_y(job.params);
    dj.border = job.params.border;
    dj.border_value = static_cast<float>(job.params.border_value);
    dj.scale = static_cast<float>(job.params.scale);
    dj.delta = static_cast<float>(job.params.delta);
    dj.take_abs = job.params.take_abs;
    return dj;
}

Support CudaBackend::can_run(const Job& job) const {
    const DeviceProbe& probe = probe_devices();
    if (probe.devices.empty()) return Support::no("no CUDA device (" + probe.problem + ")");
    const DeviceInfo& device = current_device();
    const std::size_t need = base_device_bytes(job) + extra_device_bytes(job);
    if (static_cast<double>(need) >
        kUsableMemoryShare * static_cast<double>(device.global_memory_bytes)) {
        return Support::no(
            fmt::format("needs {:.1f} GiB of device memory, {} has {:.1f} GiB",
                        static_cast<double>(need) / (1u << 30), device.name,
                        static_cast<double>(device.global_memory_bytes) / (1u << 30)));
    }
    return check_job(job, device);
}

// A filter chain's steps after the first, as the device runs them: each
// step's variant, job and taps, and its DeviceJob on the run's buffers.
struct CudaBackend::LaterStep {
    const CudaBackend* backend = nullptr;
    const Job* job = nullptr;
    const float* taps = nullptr;  // a kept buffer (device_taps)
    DeviceJob device_job;
};

RunTimings CudaBackend::run(const Job& job, const RunOptions& options) {
    // Values it does not read, or out of range, are the caller's mistake.
    if (const std::string refusal = tuning_refusal(options.tuning, tuning_params(), name());
        !refusal.empty()) {
        throw std::invalid_argument(refusal);
    }
    const DeviceInfo& device = current_device();
    CUDA_CHECK(cudaSetDevice(device.index));
    if (!keeps_fft_state()) release_fft_state();
    const Stream stream;
    // Device memory of this run alone, declared before the guard so that the
    // guard's wait comes before it is freed.
    std::vector<DeviceArray<std::byte>> rotated;
    std::vector<LaterStep> later(options.later_steps.size());
    const KeptBuffersGuard kept_buffers_guard(stream.get());  // destroyed before the stream
    RunTimings timings;
    const std::optional<BandedChain> banded = later.empty() ? std::nullopt
                                                            : banded_chain(job, options);

    // A chain's last step writes the output; this run's own step writes
    // the first image between steps.
    const ImageView& out = later.empty() ? job.dst : options.later_steps.back().job.dst;

    // Device rows: each padded to 16 bytes (kRowAlignment).
    const std::size_t src_row = device_pitch(job.src.packed_row_bytes());
    const std::size_t dst_row = device_pitch(out.packed_row_bytes());
    const std::size_t src_bytes = src_row * static_cast<std::size_t>(job.src.height);
    const std::size_t dst_bytes = dst_row * static_cast<std::size_t>(out.height);
    const std::vector<float> taps(job.params.filter.taps.begin(), job.params.filter.taps.end());

    RunBuffers& buffers = run_buffers(src_bytes, dst_bytes);
    DeviceArray<std::byte>& d_src = buffers.d_src;
    DeviceArray<std::byte>& d_dst = buffers.d_dst;

    // Straight from and to the image's rows, one 2D copy each way. From
    // ordinary memory the driver stages a copy through page-locked buffers
    // of its own (5-7 ms up and 3 ms down for 36 MB on the H100 machine);
    // locking buffers here instead costs about 30 ms for 36 MB, and a pool
    // of kept locked buffers gains nothing in a batch.
    // Memory the caller locked is copied at full speed.
    const Event up_start, up_stop;
    CUDA_CHECK(cudaEventRecord(up_start.get(), stream.get()));
    if (options.device_src) {
        CUDA_CHECK(cudaMemcpy2DAsync(d_src.get(), src_row, options.device_src,
                                     options.device_src_pitch, job.src.packed_row_bytes(),
                                     static_cast<std::size_t>(job.src.height),
                                     cudaMemcpyDeviceToDevice, stream.get()));
    } else {
        CUDA_CHECK(cudaMemcpy2DAsync(
            d_src.get(), src_row, job.src.data, static_cast<std::size_t>(job.src.row_bytes),
            job.src.packed_row_bytes(), static_cast<std::size_t>(job.src.height),
            cudaMemcpyHostToDevice, stream.get()));
    }
    const float* const d_taps = device_taps(0, taps, stream.get());
    CUDA_CHECK(cudaEventRecord(up_stop.get(), stream.get()));
    // The rows' padding, which the copy leaves alone (DeviceJob::src_pitch).
    clear_row_padding(d_src.get(), src_row, job.src, stream.get());
    // Poison the output: a sample no kernel writes shows up in the tests
    // (0xFF bytes are 255, 65535 or NaN).
    CUDA_CHECK(cudaMemsetAsync(d_dst.get(), 0xFF, dst_bytes, stream.get()));

    DeviceJob dj = device_job_of(job);
    dj.src = d_src.get();
    dj.dst = d_dst.get();
    dj.taps = d_taps;
    dj.src_pitch = static_cast<std::int64_t>(src_row);
    dj.dst_pitch = static_cast<std::int64_t>(dst_row);
    if (!later.empty() && !banded) {
        place_chain(job, options, d_dst.get(), dst_row, dj, later, stream.get());
    }

    // Copies 1..k-1 of the input and output for rotated launches; all hold
    // the same input, so whichever copy the last launch wrote is the output.
    // A chain keeps one copy.
    const std::size_t copies =
        later.empty()
            ? rotation_copies(
                  options.rotate_bytes, src_bytes + dst_bytes,
                  rotation_spare_bytes(base_device_bytes(job) + extra_device_bytes(job), device))
            : 1;
    std::vector<DeviceJob> launches(1, dj);
    for (std::size_t k = 1; k < copies; ++k) {
        rotated.push_back(device_array<std::byte>(src_bytes));
        CUDA_CHECK(cudaMemcpyAsync(rotated.back().get(), d_src.get(), src_bytes,
                                   cudaMemcpyDeviceToDevice, stream.get()));
        DeviceJob copy = dj;
        copy.src = rotated.back().get();
        rotated.push_back(device_array<std::byte>(dst_bytes));
        CUDA_CHECK(cudaMemsetAsync(rotated.back().get(), 0xFF, dst_bytes, stream.get()));
        copy.dst = rotated.back().get();
        launches.push_back(copy);
    }
    const int launch_count = options.warmup + options.repeat;
    int last_launch = 0;  // whose output is the result

    if (later.empty()) {
        const std::unique_ptr<LaunchPlan> plan = this->plan(job, dj, options.tuning, stream.get());
        timings.path = std::string(plan->path());
        const Event start, stop;
        std::optional<StreamHold> hold;
        if (options.hold_timed_launches) hold.emplace();
        for (int i = 0; i < launch_count; ++i) {
            if (!runs_again(i, launch_count, options, timings)) break;
            last_launch = i;
            const bool held = hold && i > 0;
            if (held) hold->hold(stream.get());
            CUDA_CHECK(cudaEventRecord(start.get(), stream.get()));
            plan->launch(launches[static_cast<std::size_t>(i) % copies], stream.get());
            CUDA_CHECK_LAUNCH();
            CUDA_CHECK(cudaEventRecord(stop.get(), stream.get()));
            if (held) hold->release();
            CUDA_CHECK(cudaEventSynchronize(stop.get()));
            if (held && hold->timed_out()) {
                throw CudaError(fmt::format(
                    "{}: a launch waited on the device while its stream was held for timing; "
                    "time it with --timing launch",
                    name()));
            }
            if (i >= options.warmup) timings.filter_ms.push_back(elapsed_ms(start, stop));
        }
    } else if (banded) {
        run_banded_chain(job, options, *banded, dj, timings, stream.get());
    } else {
        run_chain_launches(job, options, dj, later, timings, stream.get());
    }
    const std::byte* d_result = launches[static_cast<std::size_t>(last_launch) % copies].dst;
    if (!later.empty()) d_result = d_dst.get();

    if ((options.png_rows &&
         compress_for_png(out, d_result, dst_row, *options.png_rows, timings, stream.get())) ||
        (options.jpeg &&
         encode_for_jpeg(out, d_result, dst_row, *options.jpeg, timings, stream.get()))) {
        timings.upload_ms = elapsed_ms(up_start, up_stop);
        return timings;
    }

    const Event down_start, down_stop;
    CUDA_CHECK(cudaEventRecord(down_start.get(), stream.get()));
    CUDA_CHECK(cudaMemcpy2DAsync(out.data, static_cast<std::size_t>(out.row_bytes), d_result,
                                 dst_row, out.packed_row_bytes(),
                                 static_cast<std::size_t>(out.height), cudaMemcpyDeviceToHost,
                                 stream.get()));
    CUDA_CHECK(cudaEventRecord(down_stop.get(), stream.get()));
    CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    timings.upload_ms = elapsed_ms(up_start, up_stop);
    timings.download_ms = elapsed_ms(down_start, down_stop);
    return timings;
}

void CudaBackend::place_chain(const Job& job, const RunOptions& options, std::byte* d_out,
                              std::size_t out_row, DeviceJob& first, std::vector<LaterStep>& later,
                              cudaStream_t stream) const {
    // The images between steps take turns in one or two kept buffers, each
    // of the first one's bytes: a later image is never larger.
    const std::size_t between_row = device_pitch(job.dst.packed_row_bytes());
    const std::size_t between_bytes = between_row * static_cast<std::size_t>(job.dst.height);
    std::vector<DeviceArray<std::byte>>& between =
        between_buffers(later.size() > 1 ? 2 : 1, between_bytes);
    for (DeviceArray<std::byte>& b : between) {
        CUDA_CHECK(cudaMemsetAsync(b.get(), 0xFF, between_bytes, stream));
    }
    first.dst = between[0].get();
    first.dst_pitch = static_cast<std::int64_t>(between_row);
    const DeviceJob* before = &first;
    for (std::size_t k = 0; k < later.size(); ++k) {
        const ChainStep& step = options.later_steps[k];
        LaterStep& l = later[k];
        l.backend = dynamic_cast<const CudaBackend*>(step.backend);
        if (l.backend == nullptr) {
            throw std::invalid_argument(
                fmt::format("{}: a chain's step on {} cannot follow on the device", name(),
                            step.backend->name()));
        }
        l.job = &step.job;
        const std::vector<float> step_taps(step.job.params.filter.taps.begin(),
                                           step.job.params.filter.taps.end());
        l.taps = device_taps(k + 1, step_taps, stream);
        l.device_job = device_job_of(step.job);
        l.device_job.src = before->dst;
        l.device_job.src_pitch = before->dst_pitch;
        l.device_job.taps = l.taps;
        if (k + 1 == later.size()) {
            l.device_job.dst = d_out;
            l.device_job.dst_pitch = static_cast<std::int64_t>(out_row);
        } else {
            l.device_job.dst = between[(k + 1) % 2].get();
            l.device_job.dst_pitch =
                static_cast<std::int64_t>(device_pitch(step.job.dst.packed_row_bytes()));
        }
        before = &l.device_job;
    }
}

std::optional<CudaBackend::BandedChain> CudaBackend::banded_chain(const Job& job,
                                                                  const RunOptions& options) const {
    for (const ChainStep& step : options.later_steps) {
        if (step.backend != static_cast<const Backend*>(this)) return std::nullopt;
    }
    const std::vector<ConvParams> steps = chain_params(job, options);
    std::optional<ChainBands> bands = chain_bands(steps, job.src.width, job.src.height);
    if (!bands) return std::nullopt;
    const Job inside = one_filter_job(job.src, options.later_steps.back().job.dst, bands->inside);
    if (!runs_as_one_filter(*this, inside)) return std::nullopt;
    std::optional<ChainEdges> edges = chain_edges(steps, *bands,
                                                  device_job_of(job).filtered_channels,
                                                  chain_edges_work_limit(current_device()));
    if (!edges) return std::nullopt;
    return BandedChain{std::move(*bands), std::move(*edges)};
}

void CudaBackend::run_banded_chain(const Job& job, const RunOptions& options,
                                   const BandedChain& banded, const DeviceJob& whole,
                                   RunTimings& timings, cudaStream_t stream) const {
    const ImageView& out = options.later_steps.back().job.dst;
    const Job inside = one_filter_job(job.src, out, banded.bands.inside);
    DeviceJob inside_dj = device_job_of(inside);
    inside_dj.src = whole.src;
    inside_dj.dst = whole.dst;
    inside_dj.src_pitch = whole.src_pitch;
    inside_dj.dst_pitch = whole.dst_pitch;
    const std::vector<float> inside_taps(banded.bands.inside.filter.taps.begin(),
                                         banded.bands.inside.filter.taps.end());
    inside_dj.taps = device_taps(1, inside_taps, stream);  // the first step's are in 0

    const int launch_count = options.warmup + options.repeat;
    const Event start, stop;
    for (int i = 0; i < launch_count; ++i) {
        if (!runs_again(i, launch_count, options, timings)) break;
        // The plan is made before its launch and let go after it, as in
        // run_chain_launches: it may hold the __constant__ taps' lock.
        {
            const std::unique_ptr<LaunchPlan> plan =
                this->plan(inside, inside_dj, options.tuning, stream);
            CUDA_CHECK(cudaEventRecord(start.get(), stream));
            plan->launch(inside_dj, stream);
            CUDA_CHECK_LAUNCH();
            const Filter& f = banded.bands.inside.filter;
            timings.path =
                fmt::format("{} ({} steps as one {}x{} inside, chain-edges near the edges)",
                            plan->path().empty() ? name() : plan->path(), banded.edges.steps.count,
                            f.width, f.height);
        }
        launch_chain_edges(inside_dj, banded.edges, stream);
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaEventRecord(stop.get(), stream));
        CUDA_CHECK(cudaEventSynchronize(stop.get()));
        if (i >= options.warmup) timings.filter_ms.push_back(elapsed_ms(start, stop));
    }
}

void CudaBackend::run_chain_launches(const Job& job, const RunOptions& options,
                                     const DeviceJob& first, std::vector<LaterStep>& later,
                                     RunTimings& timings, cudaStream_t stream) const {
    // Each step's plan is made just before its launch and let go after it:
    // two steps' plans may both hold the __constant__ taps' lock, and each
    // writes the symbol on the stream, after the launches before it.
    // Timing holds are not used: making a plan may wait on the device.
    const int launch_count = options.warmup + options.repeat;
    const Event start, stop;
    for (int i = 0; i < launch_count; ++i) {
        if (!runs_again(i, launch_count, options, timings)) break;
        std::string paths;
        const auto add_path = [&](const CudaBackend& b, const LaunchPlan& plan) {
            const std::string_view p = plan.path().empty() ? b.name() : plan.path();
            paths += (paths.empty() ? "" : "+") + std::string(p);
        };
        {
            const std::unique_ptr<LaunchPlan> plan = this->plan(job, first, options.tuning, stream);
            // The first plan is made while the stream is idle, and is not
            // timed, as for one step; the later ones are made while the
            // steps before them run.
            CUDA_CHECK(cudaEventRecord(start.get(), stream));
            plan->launch(first, stream);
            CUDA_CHECK_LAUNCH();
            add_path(*this, *plan);
        }
        clear_row_padding(first.dst, static_cast<std::size_t>(first.dst_pitch), job.dst, stream);
        for (LaterStep& l : later) {
            // --param values are this variant's: a step on another variant
            // runs by its own rules.
            const Tuning tuning = l.backend == this ? options.tuning : Tuning{};
            const std::unique_ptr<LaunchPlan> plan =
                l.backend->plan(*l.job, l.device_job, tuning, stream);
            plan->launch(l.device_job, stream);
            CUDA_CHECK_LAUNCH();
            add_path(*l.backend, *plan);
            if (&l != &later.back()) {
                clear_row_padding(l.device_job.dst,
                                  static_cast<std::size_t>(l.device_job.dst_pitch), l.job->dst,
                                  stream);
            }
        }
        CUDA_CHECK(cudaEventRecord(stop.get(), stream));
        CUDA_CHECK(cudaEventSynchronize(stop.get()));
        if (i >= options.warmup) timings.filter_ms.push_back(elapsed_ms(start, stop));
        timings.path = paths;
    }
}

}  // namespace cudaconv
