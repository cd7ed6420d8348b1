// cudnn for a convolution layer (core/conv_layer.hpp): cuDNN's forward
// convolution over all C_in channels into C_out (one group), between two
// kernels of ours. A "pad" kernel builds the tensor cuDNN reads from our
// (H, W, C_in) input: the border (any of core/border.hpp, and Keras's
// uneven split for even kernels, which cuDNN's symmetric zero padding
// cannot express) and the transposition to planes for NCHW. Where cuDNN's
// own padding serves (zeros around an odd kernel, or `valid`) and the
// layout is NHWC, cuDNN reads the input as uploaded and the pad kernel does
// not run. A "finish" kernel adds the bias, applies the activation and the
// 2x2 max pool, and writes our (H, W, C_out) order.
//
// The first image, and each whose size differs from the one before, times
// every candidate algorithm in both of cuDNN's layouts (NCHW and NHWC) on
// the image's own data and keeps the fastest; `cudaconv -v` logs each
// one's time or status. Without --allow-tf32 the math is FMA only: float32
// products, never TF32.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/border.hpp"
#include "kernels/cudnn/cudnn_layer.hpp"
#include "kernels/cudnn/cudnn_loader.hpp"
#include "kernels/device/device_common.cuh"
#include "kernels/layer/bordered_input.cuh"
#include "kernels/layer/timed_layer_runs.hpp"
#include "kernels/runtime/cuda_check.hpp"
#include "kernels/runtime/cuda_resources.hpp"
#include "kernels/runtime/device_info.hpp"
#include "kernels/runtime/stream_hold.hpp"

namespace cudaconv {
namespace {

// cuDNN describes tensors with int dimensions: each must hold fewer than
// 2^31 elements.
constexpr std::int64_t kCudnnMaxElements = (std::int64_t{1} << 31) - 1;
// The workspace an algorithm may use (GEMM's im2col of VGG16's first layer
// is 116 MB); those needing more are passed over.
constexpr std::size_t kMaxWorkspaceBytes = std::size_t{512} << 20;
constexpr int kThreads = 256;

// The sizes the kernels need, all counted in elements. Every tensor holds
// fewer than 2^31 (kCudnnMaxElements), so the kernels index in 32 bits.
struct LayerDims {
    std::int64_t in_height = 0, in_width = 0;
    // The tensor cuDNN reads: the input, bordered by the pad kernel unless
    // cuDNN pads it (cudnn_pad_*) or it needs no padding.
    std::int64_t padded_height = 0, padded_width = 0;
    std::int64_t conv_height = 0, conv_width = 0;
    std::int64_t out_height = 0, out_width = 0;
    int in_channels = 0, out_channels = 0;
    int pad_top = 0, pad_left = 0;         // what the pad kernel puts before the input
    int cudnn_pad_h = 0, cudnn_pad_w = 0;  // the zeros cuDNN adds each side
    bool nhwc = false;                     // cuDNN's tensors channels-last; else planar

    // cuDNN reads the input as uploaded: channels-last, and no border for
    // the pad kernel to build.
    bool reads_input() const {
        return nhwc && padded_height == in_height && padded_width == in_width && pad_top == 0 &&
               pad_left == 0;
    }
    __host__ __device__ std::int64_t padded_elements() const {
        return padded_height * padded_width * in_channels;
    }
    __host__ __device__ std::int64_t conv_elements() const {
        return conv_height * conv_width * out_channels;
    }
    __host__ __device__ std::int64_t out_elements() const {
        return out_height * out_width * out_channels;
    }
};

// cuDNN pads with zeros, the same amount each side: Keras's padding of an
// odd kernel with a zero border. `valid` needs none.
bool cudnn_pads(const ConvLayer& layer) {
    return layer.border == BorderMode::valid ||
           (layer.border == BorderMode::constant && layer.border_value == 0.0f &&
            layer.kernel_height % 2 == 1 && layer.kernel_width % 2 == 1);
}

LayerDims dims_of(const ConvLayer& layer, const LayerGeometry& g, std::int64_t height,
                  std::int64_t width) {
    LayerDims d;
    d.in_height = height;
    d.in_width = width;
    d.conv_height = g.conv_height;
    d.conv_width = g.conv_width;
    d.out_height = g.out_height;
    d.out_width = g.out_width;
    d.in_channels = layer.in_channels;
    d.out_channels = layer.out_channels;
    if (cudnn_pads(layer)) {
        d.padded_height = height;
        d.padded_width = width;
        d.cudnn_pad_h = g.pad_top;
        d.cudnn_pad_w = g.pad_left;
    } else {
        d.padded_height = g.conv_height + layer.kernel_height - 1;
        d.padded_width = g.conv_width + layer.kernel_width - 1;
        d.pad_top = g.pad_top;
        d.pad_left = g.pad_left;
    }
    return d;
}

unsigned int grid_for(std::int64_t n) { return blocks_for(n, kThreads); }

// One thread an element of the tensor cuDNN reads, in the input's (H, W, C)
// order, so that reads are coalesced whichever layout cuDNN takes: the
// border, and the transposition to planes for NCHW.
__global__ void pad_layer_kernel(BorderedInput bordered, LayerDims d, float* __restrict__ padded) {
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= d.padded_elements()) return;
    unsigned int y = 0, x = 0, c = 0;
    const float v = bordered_element(bordered, i, y, x, c);
    padded[d.nhwc ? i
                  : (c * static_cast<unsigned int>(d.padded_height) + y) * bordered.padded_width +
                        x] = v;
}

// One thread an output element, in (H, W, C_out) order: the bias and
// activation of one convolution sum, or the maximum of a 2x2 block's.
__global__ void finish_layer_kernel(const float* __restrict__ conv, const float* __restrict__ bias,
                                    LayerDims d, bool relu, bool pool, float* __restrict__ out) {
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= d.out_elements()) return;
    const auto channels = static_cast<unsigned int>(d.out_channels);
    const auto conv_width = static_cast<unsigned int>(d.conv_width);
    const auto conv_height = static_cast<unsigned int>(d.conv_height);
    const unsigned int co = i % channels;
    const unsigned int p = i / channels;
    const unsigned int x = p % static_cast<unsigned int>(d.out_width);
    const unsigned int y = p / static_cast<unsigned int>(d.out_width);
    const float b = bias[co];
    const auto at = [&](unsigned int cy, unsigned int cx) {
        const unsigned int k = d.nhwc ? (cy * conv_width + cx) * channels + co
                                      : (co * conv_height + cy) * conv_width + cx;
        const float v = conv[k] + b;
        return relu && v < 0.0f ? 0.0f : v;
    };
    out[i] = pool ? fmaxf(fmaxf(at(2 * y, 2 * x), at(2 * y, 2 * x + 1)),
                          fmaxf(at(2 * y + 1, 2 * x), at(2 * y + 1, 2 * x + 1)))
                  : at(y, x);
}

// NCHW's transpositions through shared memory, a tile of 32 pixels by 32
// channels a block of 32x8 threads: the side read in rows of 32 floats and
// the side written likewise, where the kernels above read or write one of
// the two with a stride of a plane.
constexpr int kTile = 32;
constexpr int kTileRows = 8;

dim3 tile_grid(std::int64_t pixels, int channels) {
    return dim3(blocks_for(pixels, kTile), blocks_for(channels, kTile));
}

// The input (pixels, C_in) to cuDNN's planes (C_in, pixels), where no
// border is built (cuDNN pads, or `valid`).
__global__ void transpose_input_kernel(const float* __restrict__ input, LayerDims d,
                                       float* __restrict__ planes) {
    __shared__ float tile[kTile][kTile + 1];
    const auto pixels = static_cast<unsigned int>(d.in_height * d.in_width);
    const auto channels = static_cast<unsigned int>(d.in_channels);
    const unsigned int p0 = blockIdx.x * kTile, c0 = blockIdx.y * kTile;
    for (unsigned int r = threadIdx.y; r < kTile; r += kTileRows) {
        const unsigned int p = p0 + r, c = c0 + threadIdx.x;
        if (p < pixels && c < channels) tile[r][threadIdx.x] = input[p * channels + c];
    }
    __syncthreads();
    for (unsigned int r = threadIdx.y; r < kTile; r += kTileRows) {
        const unsigned int c = c0 + r, p = p0 + threadIdx.x;
        if (p < pixels && c < channels) planes[c * pixels + p] = tile[threadIdx.x][r];
    }
}

// finish_layer_kernel from cuDNN's planes (C_out, conv pixels): a tile of
// 32 output pixels by 32 channels, each value (bias, activation, pool)
// made reading along the pixels and written along the channels.
__global__ void finish_planes_kernel(const float* __restrict__ conv, const float* __restrict__ bias,
                                     LayerDims d, bool relu, bool pool, float* __restrict__ out) {
    __shared__ float tile[kTile][kTile + 1];
    const auto pixels = static_cast<unsigned int>(d.out_height * d.out_width);
    const auto channels = static_cast<unsigned int>(d.out_channels);
    const auto out_width = static_cast<unsigned int>(d.out_width);
    const auto conv_width = static_cast<unsigned int>(d.conv_width);
    const auto plane = static_cast<unsigned int>(d.conv_height * d.conv_width);
    const unsigned int p0 = blockIdx.x * kTile, c0 = blockIdx.y * kTile;
    for (unsigned int r = threadIdx.y; r < kTile; r += kTileRows) {
        const unsigned int c = c0 + r, p = p0 + threadIdx.x;
        if (p >= pixels || c >= channels) continue;
        const float* planes = conv + c * plane;
        const float b = bias[c];
        const auto at = [&](unsigned int cy, unsigned int cx) {
            const float v = planes[cy * conv_width + cx] + b;
            return relu && v < 0.0f ? 0.0f : v;
        };
        const unsigned int x = p % out_width, y = p / out_width;
        tile[r][threadIdx.x] = pool ? fmaxf(fmaxf(at(2 * y, 2 * x), at(2 * y, 2 * x + 1)),
                                            fmaxf(at(2 * y + 1, 2 * x), at(2 * y + 1, 2 * x + 1)))
                                    : at(y, x);
    }
    __syncthreads();
    for (unsigned int r = threadIdx.y; r < kTile; r += kTileRows) {
        const unsigned int p = p0 + r, c = c0 + threadIdx.x;
        if (p < pixels && c < channels) out[p * channels + c] = tile[threadIdx.x][r];
    }
}

#if CUDACONV_HAVE_CUDNN

// The algorithms timed: those that sum each output's own products. Not
// FFT, FFT_TILING and the WINOGRAD pair: their transforms mix the products
// of neighbouring outputs, so an output's error follows terms that are not
// its own (a zero output beside large ones is not zero), outside the
// tolerance of docs/SPEC.md's layers.
constexpr cudnnConvolutionFwdAlgo_t kCandidates[] = {
    CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM,
    CUDNN_CONVOLUTION_FWD_ALGO_GEMM, CUDNN_CONVOLUTION_FWD_ALGO_DIRECT};

// Timed runs per candidate after an untimed one, each the device's time
// alone (queued behind a hold); the fastest counts.
constexpr int kTimedRuns = 5;

// The descriptors of one layout's convolution; destroyed with it.
struct Descriptors {
    explicit Descriptors(const CudnnApi& library) : api(library) {}
    Descriptors(const Descriptors&) = delete;
    Descriptors& operator=(const Descriptors&) = delete;
    ~Descriptors() {
        if (conv) api.cudnnDestroyConvolutionDescriptor(conv);
        if (filter) api.cudnnDestroyFilterDescriptor(filter);
        if (sums) api.cudnnDestroyTensorDescriptor(sums);
        if (padded) api.cudnnDestroyTensorDescriptor(padded);
    }
    const CudnnApi& api;
    cudnnTensorDescriptor_t padded = nullptr, sums = nullptr;
    cudnnFilterDescriptor_t filter = nullptr;
    cudnnConvolutionDescriptor_t conv = nullptr;
};

std::unique_ptr<Descriptors> describe(const CudnnApi& api, const LayerDims& d, bool allow_tf32,
                                      int kernel_height, int kernel_width) {
    auto desc = std::make_unique<Descriptors>(api);
    const cudnnTensorFormat_t format = d.nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    const auto as_int = [](std::int64_t v) { return static_cast<int>(v); };
    CUDNN_CHECK(api.cudnnCreateTensorDescriptor(&desc->padded));
    CUDNN_CHECK(api.cudnnSetTensor4dDescriptor(desc->padded, format, CUDNN_DATA_FLOAT, 1,
                                               d.in_channels, as_int(d.padded_height),
                                               as_int(d.padded_width)));
    CUDNN_CHECK(api.cudnnCreateFilterDescriptor(&desc->filter));
    CUDNN_CHECK(api.cudnnSetFilter4dDescriptor(desc->filter, CUDNN_DATA_FLOAT, format,
                                               d.out_channels, d.in_channels, kernel_height,
                                               kernel_width));
    CUDNN_CHECK(api.cudnnCreateConvolutionDescriptor(&desc->conv));
    CUDNN_CHECK(api.cudnnSetConvolution2dDescriptor(desc->conv, d.cudnn_pad_h, d.cudnn_pad_w, 1, 1,
                                                    1, 1, CUDNN_CROSS_CORRELATION,
                                                    CUDNN_DATA_FLOAT));
    // The default lets Ampere and later round float operands to TF32.
    CUDNN_CHECK(api.cudnnSetConvolutionMathType(desc->conv,
                                                allow_tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH));
    int n = 0, c = 0, h = 0, w = 0;
    CUDNN_CHECK(api.cudnnGetConvolution2dForwardOutputDim(desc->conv, desc->padded, desc->filter,
                                                          &n, &c, &h, &w));
    if (n != 1 || c != d.out_channels || h != d.conv_height || w != d.conv_width) {
        throw CudaError(fmt::format("cuDNN would make a {}x{}x{}x{} output, not 1x{}x{}x{}", n, c,
                                    h, w, d.out_channels, d.conv_height, d.conv_width));
    }
    CUDNN_CHECK(api.cudnnCreateTensorDescriptor(&desc->sums));
    CUDNN_CHECK(api.cudnnSetTensor4dDescriptor(desc->sums, format, CUDNN_DATA_FLOAT, 1,
                                               d.out_channels, h, w));
    return desc;
}

// The weights in cuDNN's filter order for the layout: KCRS (C_out, C_in,
// k_h, k_w) for NCHW, KRSC (C_out, k_h, k_w, C_in) for NHWC.
std::vector<float> filter_order(const ConvLayer& layer, bool nhwc) {
    const int kh = layer.kernel_height, kw = layer.kernel_width;
    const int ci_n = layer.in_channels, co_n = layer.out_channels;
    std::vector<float> out(layer.weights.size());
    for (int ky = 0; ky < kh; ++ky) {
        for (int kx = 0; kx < kw; ++kx) {
            for (int ci = 0; ci < ci_n; ++ci) {
                const float* w = layer.tap(ky, kx, ci);
                for (int co = 0; co < co_n; ++co) {
                    const std::size_t at =
                        nhwc ? ((static_cast<std::size_t>(co) * kh + ky) * kw + kx) * ci_n + ci
                             : ((static_cast<std::size_t>(co) * ci_n + ci) * kh + ky) * kw + kx;
                    out[at] = w[co];
                }
            }
        }
    }
    return out;
}

// What one input size runs with: the chosen layout and algorithm, its
// descriptors and buffers.
struct LayerPlan {
    std::int64_t height = -1, width = -1;  // the input size it was made for
    LayerDims dims;
    std::unique_ptr<Descriptors> desc;
    cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
    std::size_t workspace_bytes = 0;
    DeviceArray<float> d_input, d_padded, d_conv, d_output, d_filter;
    DeviceArray<std::uint8_t> d_workspace;
};

class CudnnLayer final : public LayerVariant {
public:
    std::string_view name() const override { return "cudnn"; }
    std::string_view summary() const override {
        return "cuDNN forward convolution, layout and algorithm found by timing";
    }
    bool uses_cuda() const override { return true; }

    std::string refusal(const ConvLayer&) const override {
        const DeviceProbe& probe = probe_devices();
        if (probe.devices.empty()) return probe.problem;
        const CudnnLibrary& library = load_cudnn();
        return library.api ? "" : library.problem;
    }

    // The handle and stream once; the layer's bias now, its weights with
    // each plan (in the layout it chooses).
    void prepare(const ConvLayer& layer) override {
        start();
        plan_.reset();
        layer_ = &layer;
        d_bias_ = device_array<float>(layer.bias.size());
        CUDA_CHECK(cudaMemcpy(d_bias_.get(), layer.bias.data(), layer.bias.size() * sizeof(float),
                              cudaMemcpyHostToDevice));
    }

    LayerTimings run(const Tensor3& input, Tensor3& output, int warmup, int repeat,
                     const std::function<bool()>& stop) override {
        const ConvLayer& layer = *layer_;
        const LayerGeometry g = layer_geometry(layer, input.height, input.width, input.channels);
        LayerPlan& plan = plan_for(layer, g, input);
        const LayerDims& d = plan.dims;
        LayerTimings timings = timed_layer_runs(stream_->get(), *hold_, "cudnn", input,
                                                plan.d_input.get(), output, plan.d_output.get(),
                                                warmup, repeat, stop, [&] { launch(layer, plan); });
        timings.path =
            fmt::format("cudnn.{}.{}", d.nhwc ? "nhwc" : "nchw", cudnn_algo_name(plan.algo));
        return timings;
    }

    ~CudnnLayer() override {
        plan_.reset();
        if (handle_) api_->cudnnDestroy(handle_);
    }

private:
    void start() {
        if (handle_) return;
        api_ = load_cudnn().api;
        if (!api_) throw CudaError(load_cudnn().problem);
        stream_ = std::make_unique<Stream>();
        hold_ = std::make_unique<StreamHold>();
        CUDNN_CHECK(api_->cudnnCreate(&handle_));
        CUDNN_CHECK(api_->cudnnSetStream(handle_, stream_->get()));
    }

    // The plan for this input's size: the last one made, or a new one.
    LayerPlan& plan_for(const ConvLayer& layer, const LayerGeometry& g, const Tensor3& input) {
        if (plan_ && plan_->height == input.height && plan_->width == input.width) return *plan_;
        plan_.reset();  // its device memory first
        LayerDims d = dims_of(layer, g, input.height, input.width);
        const std::int64_t largest =
            std::max({static_cast<std::int64_t>(input.data.size()), d.padded_elements(),
                      d.conv_elements(), static_cast<std::int64_t>(layer.weights.size())});
        if (largest > kCudnnMaxElements) {
            throw CudaError(fmt::format(
                "cudnn: cuDNN tensors hold fewer than 2^31 elements; this layer needs {}",
                largest));
        }
        auto plan = std::make_unique<LayerPlan>();
        plan->height = input.height;
        plan->width = input.width;
        const cudaStream_t s = stream_->get();
        plan->d_input = device_array<float>(input.data.size());
        // The padded input, unless cuDNN reads the input (in either layout: d
        // is not yet chosen).
        plan->d_padded = device_array<float>(d.padded_elements());
        plan->d_conv = device_array<float>(d.conv_elements());
        plan->d_output = device_array<float>(d.out_elements());
        plan->d_filter = device_array<float>(layer.weights.size());
        CUDA_CHECK(cudaMemcpyAsync(plan->d_input.get(), input.data.data(),
                                   input.data.size() * sizeof(float), cudaMemcpyHostToDevice, s));
        choose(layer, d, *plan);
        return *(plan_ = std::move(plan));
    }

    // Times every algorithm in both layouts and keeps the fastest.
    void choose(const ConvLayer& layer, LayerDims d, LayerPlan& plan) {
        const cudaStream_t s = stream_->get();
        DeviceArray<std::uint8_t> workspace = device_array<std::uint8_t>(kMaxWorkspaceBytes);
        const Event start, stop;
        std::optional<float> best_ms;
        for (const bool nhwc : {false, true}) {
            d.nhwc = nhwc;
            const char* layout = nhwc ? "nhwc" : "nchw";
            const auto desc =
                describe(*api_, d, layer.allow_tf32, layer.kernel_height, layer.kernel_width);
            upload_filter(layer, nhwc, plan);
            pad(layer, d, plan);
            for (const cudnnConvolutionFwdAlgo_t algo : kCandidates) {
                std::size_t bytes = 0;
                cudnnStatus_t status = api_->cudnnGetConvolutionForwardWorkspaceSize(
                    handle_, desc->padded, desc->filter, desc->conv, desc->sums, algo, &bytes);
                if (status == CUDNN_STATUS_SUCCESS && bytes > kMaxWorkspaceBytes) {
                    spdlog::debug("cudnn layer: {} {} needs {} MiB of workspace, over {} MiB",
                                  layout, cudnn_algo_name(algo), bytes >> 20,
                                  kMaxWorkspaceBytes >> 20);
                    continue;
                }
                const auto forward = [&] {
                    const float one = 1.0f, zero = 0.0f;
                    return api_->cudnnConvolutionForward(
                        handle_, &one, desc->padded, cudnn_input(d, plan), desc->filter,
                        plan.d_filter.get(), desc->conv, algo, workspace.get(), bytes, &zero,
                        desc->sums, plan.d_conv.get());
                };
                if (status == CUDNN_STATUS_SUCCESS) status = forward();  // untimed
                float ms = 1e30f;
                for (int i = 0; i < kTimedRuns && status == CUDNN_STATUS_SUCCESS; ++i) {
                    {
                        const HeldStream hold(*hold_, s);
                        CUDA_CHECK(cudaEventRecord(start.get(), s));
                        status = forward();
                        CUDA_CHECK(cudaEventRecord(stop.get(), s));
                    }
                    CUDA_CHECK(cudaEventSynchronize(stop.get()));
                    float run_ms = 0.0f;
                    CUDA_CHECK(cudaEventElapsedTime(&run_ms, start.get(), stop.get()));
                    ms = std::min(ms, run_ms);
                    // An algorithm that waits on the host inside its launch held
                    // the hold for its second: its time counts once, host's and all.
                    if (hold_->timed_out()) break;
                }
                if (status != CUDNN_STATUS_SUCCESS) {
                    spdlog::debug("cudnn layer: {} {} {}", layout, cudnn_algo_name(algo),
                                  api_->cudnnGetErrorString(status));
                    continue;
                }
                spdlog::debug("cudnn layer: {} {} {:.3f} ms ({} bytes of workspace)", layout,
                              cudnn_algo_name(algo), ms, bytes);
                if (!best_ms || ms < *best_ms) {
                    best_ms = ms;
                    plan.algo = algo;
                    plan.workspace_bytes = bytes;
                    plan.dims = d;
                }
            }
        }
        if (!best_ms) {
            throw CudaError(fmt::format("cuDNN has no algorithm for the layer {} (`cudaconv -v` "
                                        "lists why for each)",
                                        layer_label(layer)));
        }
        spdlog::debug("cudnn layer: chose {} {} ({:.3f} ms)", plan.dims.nhwc ? "nhwc" : "nchw",
                      cudnn_algo_name(plan.algo), *best_ms);
        plan.desc =
            describe(*api_, plan.dims, layer.allow_tf32, layer.kernel_height, layer.kernel_width);
        upload_filter(layer, plan.dims.nhwc, plan);
        workspace.reset();  // only the workspace the choice needs
        plan.d_workspace = device_array<std::uint8_t>(plan.workspace_bytes);
    }

    void upload_filter(const ConvLayer& layer, bool nhwc, LayerPlan& plan) {
        const std::vector<float> filter = filter_order(layer, nhwc);
        CUDA_CHECK(cudaMemcpyAsync(plan.d_filter.get(), filter.data(),
                                   filter.size() * sizeof(float), cudaMemcpyHostToDevice,
                                   stream_->get()));
        CUDA_CHECK(cudaStreamSynchronize(stream_->get()));  // `filter` leaves scope
    }

    // What cuDNN reads: the input, or the tensor the pad kernel makes.
    static const float* cudnn_input(const LayerDims& d, const LayerPlan& plan) {
        return d.reads_input() ? plan.d_input.get() : plan.d_padded.get();
    }

    // The pad kernel, where cuDNN does not read the input as it is.
    void pad(const ConvLayer& layer, const LayerDims& d, const LayerPlan& plan) {
        if (d.reads_input()) return;
        const bool transpose_only = !d.nhwc && d.padded_height == d.in_height &&
                                    d.padded_width == d.in_width && d.pad_top == 0 &&
                                    d.pad_left == 0;
        if (transpose_only) {
            transpose_input_kernel<<<tile_grid(d.in_height * d.in_width, d.in_channels),
                                     dim3(kTile, kTileRows), 0, stream_->get()>>>(
                plan.d_input.get(), d, plan.d_padded.get());
        } else {
            const BorderedInput bordered{plan.d_input.get(),
                                         static_cast<unsigned int>(d.in_height),
                                         static_cast<unsigned int>(d.in_width),
                                         static_cast<unsigned int>(d.in_channels),
                                         static_cast<unsigned int>(d.padded_width),
                                         static_cast<int>(d.pad_top),
                                         static_cast<int>(d.pad_left),
                                         layer.border,
                                         layer.border_value};
            pad_layer_kernel<<<grid_for(d.padded_elements()), kThreads, 0, stream_->get()>>>(
                bordered, d, plan.d_padded.get());
        }
        CUDA_CHECK_LAUNCH();
    }

    // One run: pad, convolve, finish.
    void launch(const ConvLayer& layer, const LayerPlan& plan) {
        const cudaStream_t s = stream_->get();
        const LayerDims& d = plan.dims;
        pad(layer, d, plan);
        const float one = 1.0f, zero = 0.0f;
        CUDNN_CHECK(api_->cudnnConvolutionForward(
            handle_, &one, plan.desc->padded, cudnn_input(d, plan), plan.desc->filter,
            plan.d_filter.get(), plan.desc->conv, plan.algo, plan.d_workspace.get(),
            plan.workspace_bytes, &zero, plan.desc->sums, plan.d_conv.get()));
        const bool relu = layer.activation == Activation::relu;
        if (d.nhwc) {
            finish_layer_kernel<<<grid_for(d.out_elements()), kThreads, 0, s>>>(
                plan.d_conv.get(), d_bias_.get(), d, relu, layer.pool, plan.d_output.get());
        } else {
            finish_planes_kernel<<<tile_grid(d.out_height * d.out_width, d.out_channels),
                                   dim3(kTile, kTileRows), 0, s>>>(
                plan.d_conv.get(), d_bias_.get(), d, relu, layer.pool, plan.d_output.get());
        }
        CUDA_CHECK_LAUNCH();
    }

    std::shared_ptr<const CudnnApi> api_;
    cudnnHandle_t handle_ = nullptr;
    std::unique_ptr<Stream> stream_;
    std::unique_ptr<StreamHold> hold_;  // made by start(): it allocates with CUDA
    const ConvLayer* layer_ = nullptr;  // prepare()'s
    DeviceArray<float> d_bias_;
    std::unique_ptr<LayerPlan> plan_;
};

#else

// Built without cudnn.h: the variant keeps its name and says why not.
class CudnnLayer final : public LayerVariant {
public:
    std::string_view name() const override { return "cudnn"; }
    std::string_view summary() const override { return "cuDNN forward convolution"; }
    bool uses_cuda() const override { return true; }
    std::string refusal(const ConvLayer&) const override { return load_cudnn().problem; }
    void prepare(const ConvLayer&) override {}
    LayerTimings run(const Tensor3&, Tensor3&, int, int, const std::function<bool()>&) override {
        throw CudaError("cudnn: " + load_cudnn().problem);
    }
};

#endif  // CUDACONV_HAVE_CUDNN

}  // namespace

std::unique_ptr<LayerVariant> make_cudnn_layer() { return std::make_unique<CudnnLayer>(); }

}  // namespace cudaconv
