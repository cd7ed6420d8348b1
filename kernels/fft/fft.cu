// fft: correlation in the frequency domain with cuFFT, for large filters
// (Hofmann, "next steps"). Its cost does not grow with the filter's area.
//
// Scheme. Output (x, y) reads the bordered input over a window of
// used = (dst_width + fw - 1) x (dst_height + fh - 1) samples, starting at
// (origin_x, origin_y). A pad kernel writes that window, one float plane per
// filtered channel, into Hp x Wp planes (fast sizes of core/fft_sizes.hpp)
// and zeros the rest. Every border mode, constant and valid included, is
// thereby applied exactly in the spatial domain, by the shared policy. The
// circular correlation R(x, y) = sum_ij T(i, j) P((x + i) mod Wp, (y + j) mod Hp)
// of the planes P with the zero-padded taps T never wraps for x < dst_width,
// y < dst_height, because x + i < used_width <= Wp; so R is the exact
// correlation there. In the frequency domain R = F^-1(F(P) . conj(F(T))) / N,
// N = Hp * Wp. plan() computes conj(F(T)) / N once (untimed) and keeps
// it, with the plans and buffers, for the next run of the same shape and
// taps on the thread (a batch's images, one filter); each launch
// is pad, one batched R2C over the planes, a pointwise product, one batched
// C2R, and a finish kernel that crops, applies scale/delta/abs and the output
// depth, interleaves the channels and copies alpha.
//
// Accuracy (the bound of fft_error_bound() in core/fft_sizes.hpp). Let
// u = 2^-24, S = sum |taps|, M = max |P|, p and t the padded planes. A
// Cooley-Tukey FFT with accurate twiddles has a normwise error
// ||fl(Fx) - Fx||_2 <= c u log2(N) ||Fx||_2, c about 5 (Gentleman & Sande
// 1966; Higham, Accuracy and Stability, Thm 24.2); cuFFT's radix 2/3/5/7
// kernels keep that form. With ||Fx||_2 = sqrt(N) ||x||_2, |F(t)(k)| <= S and
// ||t * p||_2 <= S ||p||_2 (Young), each step's error reaches the output as
//   image R2C:        c u log2(N) S ||p||_2
//   filter R2C:       c u log2(N) ||t||_2 ||p||_2   (its error spreads over all bins)
//   product, 1/N:     3u S ||p||_2
//   C2R:              c u log2(N) S ||p||_2
// so ||error||_2 <= (3c log2(N) + 3) u S ||p||_2 <= (3c log2(N) + 3) u S M sqrt(N).
// Every rounding error reaches every output through unit-modulus weights, so
// the error is spread evenly and a sample's share is ||error||_2 / sqrt(N):
// about 15 u (log2(N) + 0.2) S M. That worst-case growth in log2(N) is
// pessimistic (errors add like a random walk, growing as sqrt(log N) on
// average), which covers the tail of the largest of N samples. The bound is
// 16 u (log2(N) + 2) S M, in input units, times |scale| for the output.
// Measured on an H100, the worst error over 1,300 varied jobs was 1/18 of
// it. On 8-bit images with a normalised filter it is about 0.01 of a level.
//
// Refusals: empty outputs (valid with a filter larger than the image), NaN
// or Inf input samples (a transform spreads them to every output), and
// magnitudes whose spectra would overflow float32.
#include <cuda_runtime.h>
#include <cufft.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "kernels/fft/cufft_loader.hpp"
#include "kernels/runtime/cuda_backend.hpp"
#include "kernels/runtime/cuda_check.hpp"
#include "kernels/runtime/cuda_resources.hpp"
#include "kernels/runtime/cuda_registry.hpp"
#include "kernels/device/device_common.cuh"
#include "core/fft_sizes.hpp"

namespace cudaconv {
namespace {

// 32 x 8 threads: a warp spans a row, so plane reads and writes coalesce.
constexpr int kBlockX = 32;
constexpr int kBlockY = 8;
// The elementwise product is one complex per thread, streamed.
constexpr int kBlock1D = 256;
// CUDA's grid limit in y; the kernels stride over anything larger.
constexpr unsigned int kMaxGridBlocks = 65535;
// Spectra reach N * M * S; stay 100x below FLT_MAX (3.4e38) for the growth
// of complex butterflies. Only f32 inputs of absurd magnitude come near it.
constexpr double kMaxSpectrumMagnitude = 1e36;
// Samples in all planes: 2^40 floats is 4 TiB, beyond any device, so the
// memory check refuses first and every 64-bit index product stays small.
constexpr double kMaxTransformSamples = 1099511627776.0;
// cuFFT's work area for these 2-D R2C/C2R plans, as a share of the batch's
// spectra, for the memory check before any plan exists; plan() then
// allocates what cuFFT asks for. Measured on H100 / CUDA 13 over even widths
// 2..24010 and heights 2..16807, batches 1/3/4: never above 1.0 (odd widths,
// which this variant never plans, reach 4).
constexpr double kWorkAreaShare = 1.0;

// The numbers of an FftShape, in a form kernels take by value.
struct PlaneLayout {
    std::int64_t used_width, used_height;  // the window of bordered input
    std::int64_t width, height;            // Wp, Hp
    std::int64_t plane;                    // Wp * Hp
};

PlaneLayout layout_of(const FftShape& s) {
    return {s.used_width, s.used_height, s.padded_width, s.padded_height, s.plane()};
}

template <typename In>
__global__ void pad_image_kernel(DeviceJob job, PlaneLayout layout, float* planes) {
    for (std::int64_t y = blockIdx.y * blockDim.y + threadIdx.y; y < layout.height;
         y += static_cast<std::int64_t>(gridDim.y) * blockDim.y) {
        for (std::int64_t x = blockIdx.x * blockDim.x + threadIdx.x; x < layout.width;
             x += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
            const bool used = x < layout.used_width && y < layout.used_height;
            float* out = planes + y * layout.width + x;
            for (int c = 0; c < job.filtered_channels; ++c) {
                out[c * layout.plane] =
                    used ? load_bordered<In>(job, x + job.origin_x, y + job.origin_y, c) : 0.0f;
            }
        }
    }
}

__global__ void pad_taps_kernel(const float* taps, int filter_width, int filter_height,
                                PlaneLayout layout, float* plane) {
    for (std::int64_t y = blockIdx.y * blockDim.y + threadIdx.y; y < layout.height;
         y += static_cast<std::int64_t>(gridDim.y) * blockDim.y) {
        for (std::int64_t x = blockIdx.x * blockDim.x + threadIdx.x; x < layout.width;
             x += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
            const bool tap = x < filter_width && y < filter_height;
            plane[y * layout.width + x] = tap ? taps[y * filter_width + x] : 0.0f;
        }
    }
}

// F(T) -> conj(F(T)) / N: correlation rather than convolution, and the
// inverse transform's missing normalisation, both folded in once.
__global__ void conjugate_scale_kernel(cufftComplex* spectrum, std::int64_t count, float scale) {
    for (std::int64_t k = blockIdx.x * blockDim.x + threadIdx.x; k < count;
         k += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
        const cufftComplex f = spectrum[k];
        spectrum[k] = make_cuComplex(f.x * scale, -f.y * scale);
    }
}

// Each channel's spectrum times the prepared filter spectrum.
__global__ void multiply_spectra_kernel(cufftComplex* spectra, const cufftComplex* filter,
                                        std::int64_t spectrum_plane, int channels) {
    for (std::int64_t k = blockIdx.x * blockDim.x + threadIdx.x; k < spectrum_plane;
         k += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
        const cufftComplex f = filter[k];
        for (int c = 0; c < channels; ++c) {
            cufftComplex* z = spectra + c * spectrum_plane + k;
            const cufftComplex v = *z;
            *z = make_cuComplex(v.x * f.x - v.y * f.y, v.x * f.y + v.y * f.x);
        }
    }
}

// Correlation (x, y) of channel c is plane c at (x, y): crop, finish, store.
template <typename In>
__global__ void finish_kernel(DeviceJob job, PlaneLayout layout, const float* planes) {
    for (std::int64_t y = blockIdx.y * blockDim.y + threadIdx.y; y < job.dst_height;
         y += static_cast<std::int64_t>(gridDim.y) * blockDim.y) {
        for (std::int64_t x = blockIdx.x * blockDim.x + threadIdx.x; x < job.dst_width;
             x += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
            const float* in = planes + y * layout.width + x;
            for (int c = 0; c < job.filtered_channels; ++c) {
                store_result(job, x, y, c, in[c * layout.plane]);
            }
            copy_unfiltered<In>(job, x, y);
        }
    }
}

dim3 grid_2d(std::int64_t width, std::int64_t height) {
    return dim3(std::min(blocks_for(width, kBlockX), kMaxGridBlocks),
                std::min(blocks_for(height, kBlockY), kMaxGridBlocks));
}

dim3 grid_1d(std::int64_t count) {
    return dim3(std::min(blocks_for(count, kBlock1D), kMaxGridBlocks));
}

// The cuFFT opened at run time (cufft_loader.hpp); every call below comes
// after check_job found it.
const CufftApi& cufft() { return *load_cufft().api; }

// An owned cuFFT handle; destroyed once, also when an exception unwinds.
class FftPlan {
public:
    FftPlan() = default;
    ~FftPlan() { reset(); }
    FftPlan(FftPlan&& other) noexcept
        : handle_(other.handle_), owned_(std::exchange(other.owned_, false)) {}
    FftPlan& operator=(FftPlan&& other) noexcept {
        if (this != &other) {
            reset();
            handle_ = other.handle_;
            owned_ = std::exchange(other.owned_, false);
        }
        return *this;
    }
    FftPlan(const FftPlan&) = delete;
    FftPlan& operator=(const FftPlan&) = delete;

    static FftPlan create() {
        FftPlan plan;
        CUFFT_CHECK(cufft().cufftCreate(&plan.handle_));
        plan.owned_ = true;
        return plan;
    }
    cufftHandle get() const { return handle_; }
    void reset() {
        if (owned_) cufft().cufftDestroy(handle_);
        owned_ = false;
    }

private:
    cufftHandle handle_{};
    bool owned_ = false;
};

// A batch of Hp x Wp real planes <-> Hp x (Wp/2 + 1) spectra, each packed
// after the other, on `stream`. The work area is left to the caller (one is
// shared by all plans); *work_bytes grows to this plan's need.
FftPlan make_plan(const FftShape& shape, cufftType type, std::int64_t batch, cudaStream_t stream,
                  std::size_t* work_bytes) {
    FftPlan plan = FftPlan::create();
    CUFFT_CHECK(cufft().cufftSetAutoAllocation(plan.get(), 0));
    CUFFT_CHECK(cufft().cufftSetStream(plan.get(), stream));
    long long n[2] = {shape.padded_height, shape.padded_width};
    long long real_embed[2] = {shape.padded_height, shape.padded_width};
    long long spectrum_embed[2] = {shape.padded_height, shape.spectrum_width()};
    const bool forward = type == CUFFT_R2C;
    std::size_t work = 0;
    CUFFT_CHECK(cufft().cufftMakePlanMany64(
        plan.get(), 2, n, forward ? real_embed : spectrum_embed, 1,
        forward ? shape.plane() : shape.spectrum_plane(), forward ? spectrum_embed : real_embed, 1,
        forward ? shape.spectrum_plane() : shape.plane(), type, batch, &work));
    *work_bytes = std::max(*work_bytes, work);
    return plan;
}

// The largest |sample| the planes can hold, cheaply: integer depths by
// their range, floats by a scan (which also finds NaN and Inf).
double padded_sample_limit(const Job& job) {
    const double border =
        job.params.border == BorderMode::constant ? std::abs(job.params.border_value) : 0.0;
    switch (job.src.depth) {
        case Depth::u8: return std::max(255.0, border);
        case Depth::u16: return std::max(65535.0, border);
        case Depth::f32: break;
    }
    return max_abs_filtered_input(job);
}

double transform_samples(const FftShape& shape, int channels) {
    return static_cast<double>(shape.padded_width) * static_cast<double>(shape.padded_height) *
           channels;
}

// What plan() builds, kept for the next run with the same transform
// shape, channel count and taps: a batch filters image after image with one
// filter, and building it (three plans, 300 MB of buffers for 12 megapixels
// of RGB, the filter's transform) took longer than filtering. One a thread,
// like the run buffers of cuda_backend.cu: the batch's GPU thread keeps its
// own, and a thread's state is freed when the thread ends, before the CUDA
// runtime's own teardown at exit. A run of another shape frees it first.
struct FftKey {
    int device = 0;
    FftShape shape;
    int channels = 0;
    int filter_width = 0, filter_height = 0;
    std::vector<double> taps;

    auto tied() const {
        return std::tie(device, shape.used_width, shape.used_height, shape.padded_width,
                        shape.padded_height, channels, filter_width, filter_height, taps);
    }
    bool operator==(const FftKey& o) const { return tied() == o.tied(); }
};

struct FftState {
    // Buffers before plans: members go in reverse order, and the plans
    // point into the work area.
    DeviceArray<std::byte> d_work;
    DeviceArray<float> d_planes;                  // filtered_channels planes of Hp x Wp
    DeviceArray<cufftComplex> d_spectra;          // filtered_channels of Hp x (Wp/2 + 1)
    DeviceArray<cufftComplex> d_filter_spectrum;  // conj(F(T)) / N
    FftPlan forward, inverse;
    std::optional<FftKey> key;  // empty: nothing built

    // Plans first: they point into the work area.
    void clear() {
        forward.reset();
        inverse.reset();
        key.reset();
        d_work = {};
        d_planes = {};
        d_spectra = {};
        d_filter_spectrum = {};
    }
};

thread_local FftState t_fft;

// One run of the fft variant: its launches, on the thread's kept state.
class FftRun final : public LaunchPlan {
public:
    explicit FftRun(FftState& state) : state_(state) {}

    void launch(const DeviceJob& job, cudaStream_t stream) const override {
        FftState& state = state_;
        const FftShape& shape = state.key->shape;
        const PlaneLayout layout = layout_of(shape);
        const dim3 block(kBlockX, kBlockY);
        try {
            dispatch_input_depth(job.in_depth, [&](auto sample) {
                pad_image_kernel<decltype(sample)>
                    <<<grid_2d(layout.width, layout.height), block, 0, stream>>>(
                        job, layout, state.d_planes.get());
            });
            CUDA_CHECK_LAUNCH();
            CUFFT_CHECK(cufft().cufftExecR2C(state.forward.get(), state.d_planes.get(),
                                             state.d_spectra.get()));
            multiply_spectra_kernel<<<grid_1d(shape.spectrum_plane()), kBlock1D, 0, stream>>>(
                state.d_spectra.get(), state.d_filter_spectrum.get(), shape.spectrum_plane(),
                job.filtered_channels);
            CUDA_CHECK_LAUNCH();
            CUFFT_CHECK(cufft().cufftExecC2R(state.inverse.get(), state.d_spectra.get(),
                                             state.d_planes.get()));
            dispatch_input_depth(job.in_depth, [&](auto sample) {
                finish_kernel<decltype(sample)>
                    <<<grid_2d(job.dst_width, job.dst_height), block, 0, stream>>>(
                        job, layout, state.d_planes.get());
            });
        } catch (...) {
            // Whatever failed, the next run builds afresh; the caller waits
            // for the stream before anything of this run is freed.
            static_cast<void>(cudaStreamSynchronize(stream));
            state.clear();
            throw;
        }
    }

private:
    FftState& state_;
};

class FftBackend final : public CudaBackend {
public:
    std::string_view name() const override { return "fft"; }
    // One transform for all steps.
    bool runs_composed_chains(const Job&) const override { return true; }
    std::optional<int> auto_rank(const Job& job) const override { return fft_rank(job); }
    std::string_view summary() const override {
        return "cuFFT: frequency-domain product, for large filters";
    }

protected:
    Support check_job(const Job& job, const DeviceInfo&) const override {
        if (const CufftLibrary& library = load_cufft(); !library.api) {
            return Support::no(library.problem);
        }
        if (job.dst.width <= 0 || job.dst.height <= 0) {
            return Support::no("the output is empty (valid border, filter larger than the image)");
        }
        const FftShape shape = fft_shape(job);
        if (transform_samples(shape, job.filtered_channels()) > kMaxTransformSamples) {
            return Support::no(fmt::format("a {}x{} transform of {} channels is too large",
                                           shape.padded_width, shape.padded_height,
                                           job.filtered_channels()));
        }
        const double largest = padded_sample_limit(job);
        if (!std::isfinite(largest)) {
            return Support::no("the input has NaN or Inf samples, which a transform spreads "
                               "to every output");
        }
        const double peak =
            static_cast<double>(shape.plane()) * largest * std::max(1.0, tap_abs_sum(job));
        if (peak > kMaxSpectrumMagnitude) {
            return Support::no(fmt::format(
                "samples up to {:g} and taps summing to {:g} would overflow float32 in a {}x{} "
                "transform",
                largest, tap_abs_sum(job), shape.padded_width, shape.padded_height));
        }
        return Support::yes();
    }

    std::size_t extra_device_bytes(const Job& job) const override {
        if (job.dst.width <= 0 || job.dst.height <= 0) return 0;  // check_job refuses it
        const FftShape shape = fft_shape(job);
        const int channels = job.filtered_channels();
        const double planes = transform_samples(shape, channels) * sizeof(float);
        const double spectra = static_cast<double>(shape.padded_height) *
                               static_cast<double>(shape.spectrum_width()) * sizeof(cufftComplex);
        const double total = planes + spectra * (channels + 1 + kWorkAreaShare * channels);
        // Saturate: a size past any device is refused by the memory check.
        return total < 0x1p62 ? static_cast<std::size_t>(total) : (std::size_t{1} << 62);
    }

    bool keeps_fft_state() const override { return true; }

    Tolerance tolerance(const Job& job) const override {
        // The float32 transforms' absolute bound (core/fft_sizes.hpp).
        const double bound = fft_error_bound(job);
        Tolerance t;
        t.integer_levels = 1.0 + std::floor(bound);
        t.float_absolute = bound;
        return t;
    }

    // The plans and buffers stay on the thread (t_fft) between runs of one
    // shape and filter; a run's plan points at them.
    std::unique_ptr<LaunchPlan> plan(const Job& job, const DeviceJob& dj, const Tuning&,
                                     cudaStream_t stream) const override {
        FftKey key{0,
                   fft_shape(job),
                   job.filtered_channels(),
                   job.params.filter.width,
                   job.params.filter.height,
                   job.params.filter.taps};
        CUDA_CHECK(cudaGetDevice(&key.device));
        FftState& state = t_fft;
        try {
            if (!(state.key && *state.key == key)) {
                state.clear();  // the old one's device memory first
                build(state, key.shape, key.channels, dj, stream);
                state.key = std::move(key);
            }
            // Each run has its own stream.
            CUFFT_CHECK(cufft().cufftSetStream(state.forward.get(), stream));
            CUFFT_CHECK(cufft().cufftSetStream(state.inverse.get(), stream));
        } catch (...) {
            state.clear();
            throw;
        }
        return std::make_unique<FftRun>(state);
    }

private:
    // Buffers, plans, and conj(F(T)) / N from the taps on the device,
    // through plane 0 of the image buffer, which no launch has used yet.
    static void build(FftState& state, const FftShape& shape, int channels, const DeviceJob& dj,
                      cudaStream_t stream) {
        state.d_planes = device_array<float>(shape.plane() * channels);
        state.d_spectra = device_array<cufftComplex>(shape.spectrum_plane() * channels);
        state.d_filter_spectrum = device_array<cufftComplex>(shape.spectrum_plane());
        std::size_t work_bytes = 0;
        state.forward = make_plan(shape, CUFFT_R2C, channels, stream, &work_bytes);
        state.inverse = make_plan(shape, CUFFT_C2R, channels, stream, &work_bytes);
        const FftPlan filter_plan = make_plan(shape, CUFFT_R2C, 1, stream, &work_bytes);
        // One work area for all three: they run one after another on one stream.
        state.d_work = device_array<std::byte>(static_cast<std::int64_t>(work_bytes));
        CUFFT_CHECK(cufft().cufftSetWorkArea(state.forward.get(), state.d_work.get()));
        CUFFT_CHECK(cufft().cufftSetWorkArea(state.inverse.get(), state.d_work.get()));
        CUFFT_CHECK(cufft().cufftSetWorkArea(filter_plan.get(), state.d_work.get()));

        const PlaneLayout layout = layout_of(shape);
        pad_taps_kernel<<<grid_2d(layout.width, layout.height), dim3(kBlockX, kBlockY), 0,
                          stream>>>(dj.taps, dj.filter_width, dj.filter_height, layout,
                                    state.d_planes.get());
        CUDA_CHECK_LAUNCH();
        CUFFT_CHECK(cufft().cufftExecR2C(filter_plan.get(), state.d_planes.get(),
                                         state.d_filter_spectrum.get()));
        const float inverse_n = static_cast<float>(1.0 / static_cast<double>(shape.plane()));
        conjugate_scale_kernel<<<grid_1d(shape.spectrum_plane()), kBlock1D, 0, stream>>>(
            state.d_filter_spectrum.get(), shape.spectrum_plane(), inverse_n);
        CUDA_CHECK_LAUNCH();
        // Its transform must be done before its plan goes.
        CUDA_CHECK(cudaStreamSynchronize(stream));
    }
};

}  // namespace

void release_fft_state() { t_fft.clear(); }

std::unique_ptr<Backend> make_fft_backend() { return std::make_unique<FftBackend>(); }

}  // namespace cudaconv
