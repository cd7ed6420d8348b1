// cudnn: cuDNN's forward convolution, the reference the conv test repo
// measured against. The image is a batch of one, convolved depthwise: one
// group, and one filter, per filtered channel. cuDNN pads only with zeros,
// so a "pad" kernel first builds the bordered image in floats (every border
// mode, constant values and `valid`), cuDNN runs a "valid" correlation on
// it, and a "finish" kernel applies scale, delta, |.|, the output depth and
// the alpha copy into our interleaved output. plan() times each
// candidate algorithm on the job's own data, untimed itself, and keeps the
// fastest; `cudaconv -v` logs every algorithm's time or status.
//
// The float buffers are planar (NCHW), not interleaved like our images:
// the pad and finish kernels convert for free, and on the H100 cuDNN 9.19
// ran NCHW 2.5x (3 channels, 3x3) to 6x (1 channel, 31x31) faster than
// NHWC, whose depthwise case it can only do by IMPLICIT_GEMM.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "kernels/runtime/cuda_backend.hpp"
#include "kernels/runtime/cuda_check.hpp"
#include "kernels/runtime/cuda_resources.hpp"
#include "kernels/runtime/cuda_registry.hpp"
#include "kernels/cudnn/cudnn_loader.hpp"
#include "kernels/device/device_common.cuh"

namespace cudaconv {
namespace {

// cuDNN describes tensors with int dimensions and indexes them with int:
// every tensor must hold fewer than 2^31 elements.
constexpr std::int64_t kCudnnMaxElements = (std::int64_t{1} << 31) - 1;

// The workspace an algorithm may use; those needing more are passed over.
// It bounds what extra_device_bytes() must promise before cuDNN is asked
// (GEMM's im2col grows with image x filter size); IMPLICIT_GEMM needs none,
// so large jobs still run.
constexpr std::size_t kMaxWorkspaceBytes = std::size_t{256} << 20;

// The sizes of the three cuDNN tensors, all NCHW floats.
struct CudnnShape {
    std::int64_t padded_width = 0, padded_height = 0;  // dst + filter - 1
    std::int64_t dst_width = 0, dst_height = 0;
    int channels = 1;  // filtered channels: the groups
    int filter_width = 1, filter_height = 1;

    std::int64_t padded_elements() const { return padded_width * padded_height * channels; }
    std::int64_t sums_elements() const { return dst_width * dst_height * channels; }
    std::int64_t filter_elements() const {
        return std::int64_t{filter_width} * filter_height * channels;
    }
};

CudnnShape shape_of(const Job& job) {
    CudnnShape s;
    s.dst_width = job.dst.width;
    s.dst_height = job.dst.height;
    s.filter_width = job.params.filter.width;
    s.filter_height = job.params.filter.height;
    s.padded_width = s.dst_width + s.filter_width - 1;
    s.padded_height = s.dst_height + s.filter_height - 1;
    s.channels = job.filtered_channels();
    return s;
}

#if CUDACONV_HAVE_CUDNN

// One thread per pixel, looping over the channels: 32 threads along a row
// keep loads and stores coalesced, and 2-D indexing needs no 64-bit
// division. grid.y is capped at 65535 blocks, so rows are grid-strided.
constexpr int kBlockX = 32;
constexpr int kBlockY = 8;
constexpr unsigned int kMaxGridY = 65535;

// One of our planar float tensors: channel c is a width x height plane.
struct Planes {
    float* data = nullptr;
    std::int64_t width = 0, height = 0;
    int channels = 1;

    __device__ float& at(std::int64_t x, std::int64_t y, int c) const {
        return data[(c * height + y) * width + x];
    }
};

dim3 grid_for(const Planes& p) {
    return dim3(blocks_for(p.width, kBlockX), std::min(blocks_for(p.height, kBlockY), kMaxGridY));
}

// P(x', y', c) = the input through the border policy at (x' + origin_x,
// y' + origin_y): cuDNN's valid correlation of P is then exactly ours.
template <typename In>
__global__ void pad_kernel(DeviceJob job, Planes padded) {
    const std::int64_t x = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (x >= padded.width) return;
    for (std::int64_t y = static_cast<std::int64_t>(blockIdx.y) * blockDim.y + threadIdx.y;
         y < padded.height; y += static_cast<std::int64_t>(gridDim.y) * blockDim.y) {
        for (int c = 0; c < padded.channels; ++c) {
            padded.at(x, y, c) = load_bordered<In>(job, x + job.origin_x, y + job.origin_y, c);
        }
    }
}

// The correlation sums (one dst_width x dst_height plane per filtered
// channel) to the interleaved output with all its channels.
template <typename In>
__global__ void finish_kernel(DeviceJob job, Planes sums) {
    const std::int64_t x = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (x >= sums.width) return;
    for (std::int64_t y = static_cast<std::int64_t>(blockIdx.y) * blockDim.y + threadIdx.y;
         y < sums.height; y += static_cast<std::int64_t>(gridDim.y) * blockDim.y) {
        for (int c = 0; c < sums.channels; ++c) store_result(job, x, y, c, sums.at(x, y, c));
        copy_unfiltered<In>(job, x, y);
    }
}

// The algorithms timed. FFT and FFT_TILING are not: their float error
// scales with the input, not the output, so an edge filter over a flat
// region misses the contract's 1e-5 (only the fft variant may, within its
// documented bound); and cudnnFind* spent 41 s on FFT_TILING alone for a
// 31x31 filter on 4000x3000 (H100, cuDNN 9.19), which is why we time the
// rest ourselves rather than through cudnnFindConvolutionForwardAlgorithm.
constexpr cudnnConvolutionFwdAlgo_t kCandidates[] = {
    CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM,
    CUDNN_CONVOLUTION_FWD_ALGO_GEMM,          CUDNN_CONVOLUTION_FWD_ALGO_DIRECT,
    CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD,      CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED};

// Runs per candidate after an untimed one (which pays for loading its
// kernels); the fastest counts, as cudnnFind* does.
constexpr int kTimedRuns = 3;

// Everything one run owns: the handle, the descriptors and the buffers.
// The destructor frees what was made, so plan() can throw at any step.
struct CudnnPlan {
    explicit CudnnPlan(std::shared_ptr<const CudnnApi> library_api) : api(std::move(library_api)) {}
    CudnnPlan(const CudnnPlan&) = delete;
    CudnnPlan& operator=(const CudnnPlan&) = delete;
    ~CudnnPlan() {
        if (conv_desc) api->cudnnDestroyConvolutionDescriptor(conv_desc);
        if (filter_desc) api->cudnnDestroyFilterDescriptor(filter_desc);
        if (sums_desc) api->cudnnDestroyTensorDescriptor(sums_desc);
        if (padded_desc) api->cudnnDestroyTensorDescriptor(padded_desc);
        if (handle) api->cudnnDestroy(handle);
    }

    Planes padded() const {
        return {d_padded.get(), shape.padded_width, shape.padded_height, shape.channels};
    }
    Planes sums() const {
        return {d_sums.get(), shape.dst_width, shape.dst_height, shape.channels};
    }
    // y = 1 * conv(x, w) + 0 * y, with the given algorithm and workspace.
    cudnnStatus_t forward(cudnnConvolutionFwdAlgo_t with, std::size_t with_bytes) const {
        const float one = 1.0f, zero = 0.0f;
        return api->cudnnConvolutionForward(handle, &one, padded_desc, d_padded.get(), filter_desc,
                                            d_filter.get(), conv_desc, with, d_workspace.get(),
                                            with_bytes, &zero, sums_desc, d_sums.get());
    }

    std::shared_ptr<const CudnnApi> api;
    CudnnShape shape;
    cudnnHandle_t handle = nullptr;
    cudnnTensorDescriptor_t padded_desc = nullptr;
    cudnnTensorDescriptor_t sums_desc = nullptr;
    cudnnFilterDescriptor_t filter_desc = nullptr;
    cudnnConvolutionDescriptor_t conv_desc = nullptr;
    cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
    std::size_t workspace_bytes = 0;
    DeviceArray<float> d_padded, d_sums, d_filter, d_workspace;
};

void describe(CudnnPlan& plan) {
    const CudnnApi& api = *plan.api;
    const CudnnShape& s = plan.shape;
    // check_job() refused every size that does not fit an int.
    const auto as_int = [](std::int64_t v) { return static_cast<int>(v); };
    CUDNN_CHECK(api.cudnnCreateTensorDescriptor(&plan.padded_desc));
    CUDNN_CHECK(api.cudnnSetTensor4dDescriptor(plan.padded_desc, CUDNN_TENSOR_NCHW,
                                               CUDNN_DATA_FLOAT, 1, s.channels,
                                               as_int(s.padded_height), as_int(s.padded_width)));
    // k = channels filters of c = 1 channel each (the per-group count), in
    // KCRS order: filter k is the taps, row-major, at k * fh * fw.
    CUDNN_CHECK(api.cudnnCreateFilterDescriptor(&plan.filter_desc));
    CUDNN_CHECK(api.cudnnSetFilter4dDescriptor(plan.filter_desc, CUDNN_DATA_FLOAT,
                                               CUDNN_TENSOR_NCHW, s.channels, 1, s.filter_height,
                                               s.filter_width));
    // No padding, stride 1, no dilation; correlation, as our taps are.
    CUDNN_CHECK(api.cudnnCreateConvolutionDescriptor(&plan.conv_desc));
    CUDNN_CHECK(api.cudnnSetConvolution2dDescriptor(plan.conv_desc, 0, 0, 1, 1, 1, 1,
                                                    CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    CUDNN_CHECK(api.cudnnSetConvolutionGroupCount(plan.conv_desc, s.channels));
    // The default lets Ampere and later round float operands to TF32 (a
    // 10-bit mantissa) on tensor cores, far outside the contract's 1e-5.
    CUDNN_CHECK(api.cudnnSetConvolutionMathType(plan.conv_desc, CUDNN_FMA_MATH));

    int n = 0, c = 0, h = 0, w = 0;
    CUDNN_CHECK(api.cudnnGetConvolution2dForwardOutputDim(plan.conv_desc, plan.padded_desc,
                                                          plan.filter_desc, &n, &c, &h, &w));
    if (n != 1 || c != s.channels || h != s.dst_height || w != s.dst_width) {
        throw CudaError(
            fmt::format("cuDNN would make a {}x{}x{}x{} output, not the 1x{}x{}x{} expected", n, c,
                        h, w, s.channels, s.dst_height, s.dst_width));
    }
    CUDNN_CHECK(api.cudnnCreateTensorDescriptor(&plan.sums_desc));
    CUDNN_CHECK(api.cudnnSetTensor4dDescriptor(plan.sums_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT,
                                               1, s.channels, h, w));
}

// Times each candidate on the padded input (d_workspace holds the whole
// budget), logs its time or why not, and keeps the fastest.
void choose_algorithm(CudnnPlan& plan, cudaStream_t stream) {
    const CudnnApi& api = *plan.api;
    const Event start, stop;
    float best_ms = 0.0f;
    bool found = false;
    for (const cudnnConvolutionFwdAlgo_t algo : kCandidates) {
        std::size_t bytes = 0;
        cudnnStatus_t status = api.cudnnGetConvolutionForwardWorkspaceSize(
            plan.handle, plan.padded_desc, plan.filter_desc, plan.conv_desc, plan.sums_desc, algo,
            &bytes);
        if (status == CUDNN_STATUS_SUCCESS && bytes > kMaxWorkspaceBytes) {
            spdlog::debug("cudnn: algo {} needs {} MiB of workspace, over the {} MiB allowed",
                          cudnn_algo_name(algo), bytes >> 20, kMaxWorkspaceBytes >> 20);
            continue;
        }
        if (status == CUDNN_STATUS_SUCCESS) status = plan.forward(algo, bytes);  // untimed
        float ms = 1e30f;
        for (int i = 0; i < kTimedRuns && status == CUDNN_STATUS_SUCCESS; ++i) {
            CUDA_CHECK(cudaEventRecord(start.get(), stream));
            status = plan.forward(algo, bytes);
            CUDA_CHECK(cudaEventRecord(stop.get(), stream));
            CUDA_CHECK(cudaEventSynchronize(stop.get()));
            float run_ms = 0.0f;
            CUDA_CHECK(cudaEventElapsedTime(&run_ms, start.get(), stop.get()));
            ms = std::min(ms, run_ms);
        }
        if (status != CUDNN_STATUS_SUCCESS) {
            spdlog::debug("cudnn: algo {} {}", cudnn_algo_name(algo),
                          api.cudnnGetErrorString(status));
            continue;
        }
        spdlog::debug("cudnn: algo {} {:.3f} ms ({} bytes of workspace)", cudnn_algo_name(algo), ms,
                      bytes);
        if (!found || ms < best_ms) {
            found = true;
            best_ms = ms;
            plan.algo = algo;
            plan.workspace_bytes = bytes;
        }
    }
    if (!found) {
        throw CudaError(fmt::format(
            "cuDNN has no algorithm for a depthwise {}x{} filter over {} channels of {}x{} "
            "(`cudaconv -v` lists why for each)",
            plan.shape.filter_width, plan.shape.filter_height, plan.shape.channels,
            plan.shape.padded_width, plan.shape.padded_height));
    }
    spdlog::debug("cudnn: chose {} ({:.3f} ms)", cudnn_algo_name(plan.algo), best_ms);
}

void pad(const DeviceJob& job, const CudnnPlan& plan, cudaStream_t stream) {
    const Planes padded = plan.padded();
    dispatch_input_depth(job.in_depth, [&](auto sample) {
        pad_kernel<decltype(sample)>
            <<<grid_for(padded), dim3(kBlockX, kBlockY), 0, stream>>>(job, padded);
    });
    CUDA_CHECK_LAUNCH();
}

#endif  // CUDACONV_HAVE_CUDNN

class CudnnBackend final : public CudaBackend {
public:
    std::string_view name() const override { return "cudnn"; }
    std::optional<int> auto_rank(const Job&) const override { return kRankCudnn; }
    std::string_view summary() const override {
        return "cuDNN forward convolution, algorithm found by timing";
    }

protected:
    Support check_job(const Job& job, const DeviceInfo&) const override {
        const CudnnLibrary& library = load_cudnn();
        if (!library.api) return Support::no(library.problem);
        const CudnnShape s = shape_of(job);
        const std::int64_t largest =
            std::max({s.padded_elements(), s.sums_elements(), s.filter_elements()});
        if (largest > kCudnnMaxElements) {
            return Support::no(fmt::format(
                "cuDNN tensors hold fewer than 2^31 elements (int indexing); this job needs {} "
                "(the image bordered to {}x{}, {} channels, a {}x{} filter per channel)",
                largest, s.padded_width, s.padded_height, s.channels, s.filter_width,
                s.filter_height));
        }
        return Support::yes();
    }

    std::size_t extra_device_bytes(const Job& job) const override {
        const CudnnShape s = shape_of(job);
        const auto floats =
            static_cast<std::size_t>(s.padded_elements() + s.sums_elements() + s.filter_elements());
        return floats * sizeof(float) + kMaxWorkspaceBytes;
    }

#if CUDACONV_HAVE_CUDNN
    std::unique_ptr<LaunchPlan> plan(const Job& job, const DeviceJob& dj, const Tuning&,
                                     cudaStream_t stream) const override {
        auto plan = std::make_unique<CudnnPlan>(load_cudnn().api);
        const CudnnApi& api = *plan->api;
        plan->shape = shape_of(job);
        const CudnnShape& s = plan->shape;
        CUDNN_CHECK(api.cudnnCreate(&plan->handle));
        CUDNN_CHECK(api.cudnnSetStream(plan->handle, stream));
        describe(*plan);

        plan->d_padded = device_array<float>(static_cast<std::size_t>(s.padded_elements()));
        plan->d_sums = device_array<float>(static_cast<std::size_t>(s.sums_elements()));
        plan->d_filter = device_array<float>(static_cast<std::size_t>(s.filter_elements()));
        plan->d_workspace = device_array<float>(kMaxWorkspaceBytes / sizeof(float));
        // One copy of the taps per group; the upload is earlier on this stream.
        const std::size_t taps = static_cast<std::size_t>(s.filter_width) * s.filter_height;
        for (int c = 0; c < s.channels; ++c) {
            CUDA_CHECK(cudaMemcpyAsync(plan->d_filter.get() + c * taps, dj.taps,
                                       taps * sizeof(float), cudaMemcpyDeviceToDevice, stream));
        }
        pad(dj, *plan, stream);  // the real input, so the timing is the job's
        choose_algorithm(*plan, stream);
        // Keep only the workspace the chosen algorithm needs.
        plan->d_workspace.reset();
        plan->d_workspace =
            device_array<float>((plan->workspace_bytes + sizeof(float) - 1) / sizeof(float));
        return std::make_unique<CudnnRun>(std::move(plan));
    }

private:
    // One run: the chosen algorithm's padding, forward convolution and finish.
    class CudnnRun final : public LaunchPlan {
    public:
        explicit CudnnRun(std::unique_ptr<CudnnPlan> plan) : plan_(std::move(plan)) {}
        void launch(const DeviceJob& job, cudaStream_t stream) const override {
            const CudnnPlan& plan = *plan_;
            pad(job, plan, stream);
            CUDNN_CHECK(plan.forward(plan.algo, plan.workspace_bytes));
            const Planes sums = plan.sums();
            dispatch_input_depth(job.in_depth, [&](auto sample) {
                finish_kernel<decltype(sample)>
                    <<<grid_for(sums), dim3(kBlockX, kBlockY), 0, stream>>>(job, sums);
            });
        }

    private:
        std::unique_ptr<CudnnPlan> plan_;
    };
#else
    // check_job() refuses every job: cuDNN's reason is "built without headers".
    std::unique_ptr<LaunchPlan> plan(const Job&, const DeviceJob&, const Tuning&,
                                     cudaStream_t) const override {
        throw CudaError("cudnn: built without cuDNN headers");
    }
#endif
};

}  // namespace

std::unique_ptr<Backend> make_cudnn_backend() { return std::make_unique<CudnnBackend>(); }

}  // namespace cudaconv
