#include "cpu/conv_layer_cpu.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include <opencv2/core.hpp>

#include "core/border.hpp"
#include "cpu/simd_rows.hpp"

namespace cudaconv {
namespace {

using Clock = std::chrono::steady_clock;

// For each padded coordinate p (0 .. conv + k - 2), the input coordinate
// it reads, or kBorderConstant: border_index over the axis, once.
std::vector<std::int64_t> axis_sources(BorderMode border, std::int64_t conv, int kernel, int pad,
                                       std::int64_t length) {
    std::vector<std::int64_t> sources(static_cast<std::size_t>(conv + kernel - 1));
    for (std::size_t p = 0; p < sources.size(); ++p) {
        sources[p] = border_index(border, static_cast<std::int64_t>(p) - pad, length);
    }
    return sources;
}

// Where each tap of the layer reads: the axes' maps, and a pixel of the
// constant border's value for taps outside the image.
struct TapSources {
    std::vector<std::int64_t> rows, columns;
    std::vector<float> constant_pixel;

    TapSources(const ConvLayer& layer, const LayerGeometry& g, const Tensor3& input)
        : rows(axis_sources(layer.border, g.conv_height, layer.kernel_height, g.pad_top,
                            input.height)),
          columns(axis_sources(layer.border, g.conv_width, layer.kernel_width, g.pad_left,
                               input.width)),
          constant_pixel(static_cast<std::size_t>(input.channels), layer.border_value) {}

    // The C_in values tap (ky, kx) of output pixel (y, x) reads.
    const float* at(const Tensor3& input, std::int64_t y, std::int64_t x, int ky, int kx) const {
        const std::int64_t sy = rows[static_cast<std::size_t>(y + ky)];
        const std::int64_t sx = columns[static_cast<std::size_t>(x + kx)];
        if (sy == kBorderConstant || sx == kBorderConstant) return constant_pixel.data();
        return input.pixel(sy, sx);
    }
};

// Runs `run_rows` over the convolution's rows on every core, then the pool.
template <typename RunRows>
LayerTimings timed_runs(const ConvLayer& layer, const Tensor3& input, Tensor3& output, int warmup,
                        int repeat, const std::function<bool()>& stop, RunRows run_rows) {
    const LayerGeometry g = layer_geometry(layer, input.height, input.width, input.channels);
    Tensor3 pooled_from;  // the convolution's output when a pool follows
    Tensor3& conv = layer.pool ? pooled_from : output;
    if (layer.pool) pooled_from = Tensor3(g.conv_height, g.conv_width, layer.out_channels);
    const TapSources taps(layer, g, input);
    LayerTimings timings;
    for (int i = 0; i < warmup + repeat; ++i) {
        if (i > 0 && stop && stop()) break;
        const auto start = Clock::now();
        cv::parallel_for_(cv::Range(0, static_cast<int>(g.conv_height)),
                          [&](const cv::Range& r) { run_rows(taps, g, r.start, r.end, conv); });
        if (layer.pool) max_pool2(conv, output);
        const std::chrono::duration<double, std::milli> took = Clock::now() - start;
        if (i >= warmup) timings.layer_ms.push_back(took.count());
    }
    return timings;
}

class CpuRefLayer final : public LayerVariant {
public:
    std::string_view name() const override { return "cpu-ref"; }
    std::string_view summary() const override {
        return "reference: every sum in double, in a fixed order";
    }
    bool uses_cuda() const override { return false; }
    std::string refusal(const ConvLayer&) const override { return ""; }
    void prepare(const ConvLayer& layer) override { layer_ = &layer; }

    LayerTimings run(const Tensor3& input, Tensor3& output, int warmup, int repeat,
                     const std::function<bool()>& stop) override {
        const ConvLayer& layer = *layer_;
        return timed_runs(
            layer, input, output, warmup, repeat, stop,
            [&](const TapSources& taps, const LayerGeometry& g, int y0, int y1, Tensor3& conv) {
                std::vector<double> sums(static_cast<std::size_t>(layer.out_channels));
                for (std::int64_t y = y0; y < y1; ++y) {
                    for (std::int64_t x = 0; x < g.conv_width; ++x) {
                        std::fill(sums.begin(), sums.end(), 0.0);
                        for (int ky = 0; ky < layer.kernel_height; ++ky) {
                            for (int kx = 0; kx < layer.kernel_width; ++kx) {
                                accumulate(layer, taps.at(input, y, x, ky, kx), ky, kx, sums);
                            }
                        }
                        float* out = conv.pixel(y, x);
                        for (int co = 0; co < layer.out_channels; ++co) {
                            out[co] = finish_layer_sum(sums[co], layer.bias[co], layer.activation);
                        }
                    }
                }
            });
    }

private:
    const ConvLayer* layer_ = nullptr;

    static void accumulate(const ConvLayer& layer, const float* pixel, int ky, int kx,
                           std::vector<double>& sums) {
        for (int ci = 0; ci < layer.in_channels; ++ci) {
            const double v = pixel[ci];
            const float* w = layer.tap(ky, kx, ci);
            for (int co = 0; co < layer.out_channels; ++co) sums[co] += v * w[co];
        }
    }
};

class CpuLayer final : public LayerVariant {
public:
    std::string_view name() const override { return "cpu"; }
    std::string_view summary() const override {
        return "float32 sums in SIMD vectors on every core";
    }
    bool uses_cuda() const override { return false; }
    std::string refusal(const ConvLayer&) const override { return ""; }
    void prepare(const ConvLayer& layer) override {
        layer_ = &layer;
        pack(layer);
    }

    LayerTimings run(const Tensor3& input, Tensor3& output, int warmup, int repeat,
                     const std::function<bool()>& stop) override {
        const ConvLayer& layer = *layer_;
        const int taps = layer.kernel_height * layer.kernel_width;
        return timed_runs(
            layer, input, output, warmup, repeat, stop,
            [&](const TapSources& sources, const LayerGeometry& g, int y0, int y1, Tensor3& conv) {
                std::vector<const float*> at(static_cast<std::size_t>(taps) * kLayerPixels);
                std::vector<float> sums(static_cast<std::size_t>(kLayerPixels * cout_pad_));
                for (std::int64_t y = y0; y < y1; ++y) {
                    for (std::int64_t x0 = 0; x0 < g.conv_width; x0 += kLayerPixels) {
                        const int pixels = static_cast<int>(
                            std::min<std::int64_t>(kLayerPixels, g.conv_width - x0));
                        for (int ky = 0; ky < layer.kernel_height; ++ky) {
                            for (int kx = 0; kx < layer.kernel_width; ++kx) {
                                for (int p = 0; p < kLayerPixels; ++p) {
                                    // A block past the row's end repeats its last pixel.
                                    const std::int64_t x = x0 + std::min(p, pixels - 1);
                                    at[(static_cast<std::size_t>(ky) * layer.kernel_width + kx) *
                                           kLayerPixels +
                                       p] = sources.at(input, y, x, ky, kx);
                                }
                            }
                        }
                        layer_pixels(at.data(), static_cast<std::size_t>(taps), layer.in_channels,
                                     packed_.data(), zeros_.data(), cout_pad_, sums.data());
                        for (int p = 0; p < pixels; ++p) {
                            float* out = conv.pixel(y, x0 + p);
                            const float* s = sums.data() + p * cout_pad_;
                            for (int co = 0; co < layer.out_channels; ++co) {
                                out[co] = finish_layer_sum(s[co], layer.bias[co], layer.activation);
                            }
                        }
                    }
                }
            });
    }

private:
    // The weights with C_out padded with zeros to a multiple of
    // kLayerChunk, and zeros for layer_pixels' starting sums: the bias is
    // added once a sum is done, as cpu-ref adds it, so that a large bias
    // does not round every product's addition.
    void pack(const ConvLayer& layer) {
        cout_pad_ = (layer.out_channels + kLayerChunk - 1) / kLayerChunk * kLayerChunk;
        const std::size_t rows =
            static_cast<std::size_t>(layer.kernel_height) * layer.kernel_width * layer.in_channels;
        packed_.assign(rows * static_cast<std::size_t>(cout_pad_), 0.0f);
        for (std::size_t r = 0; r < rows; ++r) {
            std::copy_n(layer.weights.data() + r * layer.out_channels, layer.out_channels,
                        packed_.data() + r * static_cast<std::size_t>(cout_pad_));
        }
        zeros_.assign(static_cast<std::size_t>(cout_pad_), 0.0f);
    }

    const ConvLayer* layer_ = nullptr;
    std::int64_t cout_pad_ = 0;
    std::vector<float> packed_, zeros_;
};

}  // namespace

std::unique_ptr<LayerVariant> make_cpu_ref_layer() { return std::make_unique<CpuRefLayer>(); }
std::unique_ptr<LayerVariant> make_cpu_layer() { return std::make_unique<CpuLayer>(); }

}  // namespace cudaconv
