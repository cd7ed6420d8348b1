// A convolution layer (core/conv_layer.hpp): its geometry and refusals,
// and every variant against cpu-ref on random layers chosen to reach each
// path's edges (output channels past and short of the cpu variant's
// 32-channel blocks, rows not a multiple of its 6-pixel blocks, every
// border, even kernels, the pool). The oracle itself is held to applyConv2d
// written in NumPy by tests/layer/test_apply_conv2d.py.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>

#include "core/border.hpp"
#include "core/conv_layer.hpp"
#include "io/layer_files.hpp"
#include "io/npy.hpp"
#include "support/source_dir.hpp"
#include "support/skip_without_device.hpp"
#include "variants/layer_registry.hpp"

namespace cudaconv::test {
namespace fs = std::filesystem;
namespace {

struct LayerCase {
    int height, width, kernel_height, kernel_width, in_channels, out_channels;
    BorderMode border = BorderMode::constant;
    float border_value = 0.0f;
    bool relu = false, pool = false;
};

ConvLayer random_layer(const LayerCase& c, std::mt19937& rng) {
    std::normal_distribution<float> normal;
    ConvLayer layer;
    layer.kernel_height = c.kernel_height;
    layer.kernel_width = c.kernel_width;
    layer.in_channels = c.in_channels;
    layer.out_channels = c.out_channels;
    layer.weights.resize(static_cast<std::size_t>(c.kernel_height) * c.kernel_width *
                         c.in_channels * c.out_channels);
    for (float& w : layer.weights) w = normal(rng);
    layer.bias.resize(static_cast<std::size_t>(c.out_channels));
    for (float& b : layer.bias) b = normal(rng);
    layer.border = c.border;
    layer.border_value = c.border_value;
    layer.activation = c.relu ? Activation::relu : Activation::none;
    layer.pool = c.pool;
    return layer;
}

Tensor3 random_input(const LayerCase& c, std::mt19937& rng) {
    std::normal_distribution<float> normal;
    Tensor3 t(c.height, c.width, c.in_channels);
    for (float& v : t.data) v = normal(rng);
    return t;
}

// sum |w * x| of each convolution output, before the pool: the scale of
// a float32 sum's error (the gamma_n bound).
Tensor3 magnitudes(const ConvLayer& layer, const Tensor3& in) {
    const LayerGeometry g = layer_geometry(layer, in.height, in.width, in.channels);
    Tensor3 m(g.conv_height, g.conv_width, layer.out_channels);
    for (std::int64_t y = 0; y < g.conv_height; ++y) {
        for (std::int64_t x = 0; x < g.conv_width; ++x) {
            for (int ky = 0; ky < layer.kernel_height; ++ky) {
                for (int kx = 0; kx < layer.kernel_width; ++kx) {
                    const std::int64_t sy =
                        border_index(layer.border, y + ky - g.pad_top, in.height);
                    const std::int64_t sx =
                        border_index(layer.border, x + kx - g.pad_left, in.width);
                    for (int ci = 0; ci < layer.in_channels; ++ci) {
                        const float v = sy == kBorderConstant || sx == kBorderConstant
                                            ? layer.border_value
                                            : in.pixel(sy, sx)[ci];
                        const float* w = layer.tap(ky, kx, ci);
                        for (int co = 0; co < layer.out_channels; ++co) {
                            m.pixel(y, x)[co] += std::abs(v * w[co]);
                        }
                    }
                }
            }
        }
    }
    if (!layer.pool) return m;
    Tensor3 pooled(g.out_height, g.out_width, layer.out_channels);
    max_pool2(m, pooled);
    return pooled;
}

const LayerCase kCases[] = {
    {13, 17, 3, 3, 3, 64, BorderMode::constant, 0.0f, true, false},
    {10, 14, 3, 3, 5, 37, BorderMode::constant, 0.0f, true, true},
    {9, 7, 1, 1, 70, 3},
    {11, 8, 5, 5, 2, 33, BorderMode::reflect101},
    {6, 19, 4, 2, 3, 5, BorderMode::replicate, 0.0f, false, false},
    {7, 9, 7, 7, 1, 4, BorderMode::reflect},
    {8, 8, 3, 5, 4, 6, BorderMode::wrap, 0.0f, true, true},
    {12, 11, 3, 3, 3, 9, BorderMode::constant, 2.5f},
    {15, 16, 3, 3, 6, 10, BorderMode::valid, 0.0f, true, false},
    // C_in a multiple of 32 and C_out of 4: mma's pipelined kernel, with a
    // part-filled last tile both ways, K split among blocks (5x5x64: 50
    // stages), and a 1x1 of three stages.
    {11, 13, 3, 3, 32, 36, BorderMode::reflect101, 0.0f, true, false},
    {18, 20, 5, 5, 64, 68, BorderMode::replicate, 0.0f, true, true},
    {7, 9, 1, 1, 96, 8, BorderMode::constant, 1.5f},
};

LayerVariant* find(const std::vector<std::unique_ptr<LayerVariant>>& all, std::string_view name) {
    for (const auto& v : all) {
        if (v->name() == name) return v.get();
    }
    return nullptr;
}

// `name` against cpu-ref on every case: within (n + 2) 2^-24 sum |w x|.
// `split_products`: the variant multiplies in 3xTF32, whose dropped
// lo*lo products and rounded lo parts add up to about 3 * 2^-22 of each
// product's size (SPEC's bound for mma).
void check_against_reference(std::string_view name, bool split_products = false) {
    const auto variants = make_layer_variants();
    LayerVariant* reference = find(variants, "cpu-ref");
    LayerVariant* variant = find(variants, name);
    REQUIRE(variant != nullptr);
    std::mt19937 rng(20261127);
    for (const LayerCase& c : kCases) {
        const ConvLayer layer = random_layer(c, rng);
        const Tensor3 in = random_input(c, rng);
        INFO(name << ": " << layer_label(layer) << " on " << c.width << "x" << c.height);
        REQUIRE(variant->refusal(layer).empty());
        const LayerGeometry g = layer_geometry(layer, in.height, in.width, in.channels);
        Tensor3 expected(g.out_height, g.out_width, layer.out_channels);
        Tensor3 got(g.out_height, g.out_width, layer.out_channels);
        reference->prepare(layer);
        reference->run(in, expected, 0, 1, {});
        variant->prepare(layer);
        const LayerTimings t = variant->run(in, got, 1, 2, {});
        CHECK(t.layer_ms.size() == 2);
        if (name == "mma") {  // the pipelined kernel where the shape allows, else the plain one
            const bool pipelined = c.in_channels % 32 == 0 && c.out_channels % 4 == 0;
            INFO(t.path);
            CHECK((t.path.find(".pipelined") != std::string::npos) == pipelined);
        }
        const Tensor3 m = magnitudes(layer, in);
        const double n =
            static_cast<double>(layer.kernel_height) * layer.kernel_width * layer.in_channels;
        std::size_t misses = 0;
        for (std::size_t i = 0; i < got.data.size(); ++i) {
            const double bound =
                (n + 2 + (split_products ? 12 : 0)) * std::ldexp(1.0, -24) * m.data[i] +
                std::ldexp(1.0, -24) * std::abs(expected.data[i]);
            if (!(std::abs(static_cast<double>(got.data[i]) - expected.data[i]) <= bound)) {
                if (misses++ < 3) {
                    INFO("element " << i << ": " << got.data[i] << " vs " << expected.data[i]);
                    CHECK(false);
                }
            }
        }
        CHECK(misses == 0);
    }
}

}  // namespace

TEST_CASE("layer geometry: Keras's 'same' padding, valid, the pool", "[layer]") {
    ConvLayer layer;
    layer.kernel_height = 3;
    layer.kernel_width = 4;
    layer.in_channels = 3;
    LayerGeometry g = layer_geometry(layer, 10, 12, 3);
    CHECK(g.conv_height == 10);
    CHECK(g.conv_width == 12);
    CHECK(g.pad_top == 1);
    CHECK(g.pad_left == 1);  // an even kernel's extra column goes after the image
    layer.border = BorderMode::valid;
    g = layer_geometry(layer, 10, 12, 3);
    CHECK(g.conv_height == 8);
    CHECK(g.conv_width == 9);
    CHECK(g.pad_top == 0);
    layer.pool = true;
    CHECK_THROWS_WITH(layer_geometry(layer, 10, 12, 3),
                      Catch::Contains("--pool max2 on a 9x8") && Catch::Contains("last column"));
    layer.border = BorderMode::constant;
    CHECK_THROWS_WITH(layer_geometry(layer, 11, 13, 3), Catch::Contains("last row and column"));
    g = layer_geometry(layer, 10, 12, 3);
    CHECK(g.out_height == 5);
    CHECK(g.out_width == 6);
    CHECK_THROWS_WITH(layer_geometry(layer, 10, 12, 4),
                      Catch::Contains("4 channels where the weights take C_in = 3"));
    layer.border = BorderMode::valid;
    CHECK_THROWS_WITH(layer_geometry(layer, 2, 12, 3),
                      Catch::Contains("smaller than the 4x3 kernel"));
}

TEST_CASE("layer: cpu against cpu-ref", "[layer]") { check_against_reference("cpu"); }

TEST_CASE("layer: cpu-ref's sums are double's, rounded once", "[layer]") {
    // 1 + 2^-24 + 2^-24 in float32 stays 1; in double it rounds up to 1 + 2^-23.
    ConvLayer layer;
    layer.kernel_width = 3;
    layer.weights = {1.0f, 1.0f, 1.0f};
    layer.bias = {0.0f};
    Tensor3 in(1, 3, 1);
    in.data = {1.0f, std::ldexp(1.0f, -24), std::ldexp(1.0f, -24)};
    layer.border = BorderMode::valid;
    Tensor3 out(1, 1, 1);
    const auto variants = make_layer_variants();
    find(variants, "cpu-ref")->prepare(layer);
    find(variants, "cpu-ref")->run(in, out, 0, 1, {});
    CHECK(out.data[0] == 1.0f + std::ldexp(1.0f, -23));
}

TEST_CASE("layer: cudnn against cpu-ref", "[layer][gpu][gpu-quick]") {
    if (skip_without_device()) return;
    const auto variants = make_layer_variants();
    const std::string why = find(variants, "cudnn")->refusal(ConvLayer{});
    if (!why.empty()) {
        WARN("cudnn cannot run: " << why);  // no cuDNN here: the GPU check script has it
        return;
    }
    check_against_reference("cudnn");
}

TEST_CASE("layer: mma against cpu-ref", "[layer][gpu][gpu-quick]") {
    if (skip_without_device()) return;
    const auto variants = make_layer_variants();
    const std::string why = find(variants, "mma")->refusal(ConvLayer{});
    REQUIRE(why.empty());
    check_against_reference("mma", true);
}

TEST_CASE("npy: weights are 4-D and a bias 1-D, each refused by its own words", "[npy][layer]") {
    const std::vector<float> data(2 * 3 * 4 * 5, 1.0f);
    const std::vector<std::uint8_t> w = encode_npy({2, 3, 4, 5}, data.data());
    const NpyRank weights{4, 4, "weights are (k_h, k_w, C_in, C_out)"};
    CHECK(parse_npy(w.data(), w.size(), weights).shape == std::vector<std::int64_t>{2, 3, 4, 5});
    CHECK_THROWS_WITH(parse_npy(w.data(), w.size()),
                      "4 dimensions: an image is (H, W) or (H, W, C)");
    const std::vector<std::uint8_t> b = encode_npy({5}, data.data());
    CHECK(parse_npy(b.data(), b.size(), {1, 1, "a bias is (C_out,)"}).shape ==
          std::vector<std::int64_t>{5});
    CHECK_THROWS_WITH(parse_npy(b.data(), b.size(), weights),
                      "1 dimension: weights are (k_h, k_w, C_in, C_out)");
}

TEST_CASE("layer: the sample weights load, and luma-sobel does what it says", "[layer]") {
    const fs::path samples = source_dir() / "filters" / "samples";
    int loaded = 0;
    for (const auto& entry : fs::directory_iterator(samples)) {
        if (entry.path().extension() != ".npy") continue;
        INFO(entry.path());
        CHECK_NOTHROW(load_conv_layer(entry.path().string(), ""));
        ++loaded;
    }
    CHECK(loaded >= 1);
    const ConvLayer layer = load_conv_layer((samples / "luma-sobel.npy").string(), "");
    // A ramp rising by 1 a column in every channel: d/dx of the luma is
    // 8 (Sobel's weights sum to 4 a side), d/dy 0, the luma the value.
    Tensor3 in(4, 5, 3);
    for (std::int64_t y = 0; y < 4; ++y) {
        for (std::int64_t x = 0; x < 5; ++x) {
            for (int c = 0; c < 3; ++c) in.pixel(y, x)[c] = static_cast<float>(x);
        }
    }
    ConvLayer valid = layer;
    valid.border = BorderMode::valid;
    Tensor3 out(2, 3, 3);
    const auto variants = make_layer_variants();
    find(variants, "cpu-ref")->prepare(valid);
    find(variants, "cpu-ref")->run(in, out, 0, 1, {});
    CHECK(out.pixel(0, 0)[0] == Approx(8.0f));
    CHECK(out.pixel(1, 2)[1] == Approx(0.0f).margin(1e-6));
    CHECK(out.pixel(1, 2)[2] == Approx(3.0f));
}

}  // namespace cudaconv::test
