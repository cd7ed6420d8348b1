// cpu-ref, the oracle of every other variant, against cv::filter2D (through
// tests/support/opencv_reference, which shares no code with cpu-ref): a full
// product on a small core of borders x channels x sizes x filter sizes x
// depths, then a seeded random sample over everything else (depth pairs,
// scale/delta/abs, anchors, border values, ROIs, 255/256/257-wide images).
// Also the pieces cpu-ref leans on: the output conversion, flip/normalize as
// Filter operations, and the comparison helper itself.
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <opencv2/core.hpp>

#include "core/convert.hpp"
#include "core/job.hpp"
#include "variants/registry.hpp"
#include "support/compare.hpp"
#include "support/opencv_reference.hpp"
#include "support/random_image.hpp"

namespace {

using cudaconv::AlphaMode;
using cudaconv::BorderMode;
using cudaconv::ConvParams;
using cudaconv::Depth;
using cudaconv::Filter;
using cudaconv::test::compare_images;
using cudaconv::test::Comparison;

constexpr std::uint64_t kCoreSeed = 0xC0DE0001;
constexpr std::uint64_t kSampleSeed = 0x5A3D0001;
constexpr std::uint64_t kFlipSeed = 0xF11F0001;
// The random sample: enough combinations to meet every depth pair, border,
// channel layout and size class many times over, in a few seconds.
constexpr int kSampleCases = 600;
// Taps x samples of one random case: up to 256x9x4 with 31x31, about 50 ms.
constexpr double kMaxCaseWork = 1e7;

struct Case {
    std::uint64_t seed = 0;
    int width = 1;
    int height = 1;
    int channels = 1;
    Depth in_depth = Depth::u8;
    Depth out_depth = Depth::u8;
    ConvParams params;  // filter already random, anchor already chosen
    bool roi = false;   // src and dst are ROIs of larger images (row padding)
};

std::string describe(const Case& c) {
    const ConvParams& p = c.params;
    std::ostringstream os;
    os.precision(17);
    os << "seed=0x" << std::hex << c.seed << std::dec << " image=" << c.width << "x" << c.height
       << "x" << c.channels << " " << cudaconv::depth_name(c.in_depth) << "->"
       << cudaconv::depth_name(c.out_depth) << " filter=" << p.filter.width << "x"
       << p.filter.height << " anchor=(" << p.anchor_x << "," << p.anchor_y
       << ") border=" << cudaconv::border_name(p.border);
    if (p.border == BorderMode::constant) os << " border_value=" << p.border_value;
    os << " scale=" << p.scale << " delta=" << p.delta << " abs=" << (p.take_abs ? "yes" : "no");
    if (c.channels == 4) os << " alpha=" << (p.alpha == AlphaMode::keep ? "keep" : "filter");
    os << " roi=" << (c.roi ? "yes" : "no");
    return os.str();
}

cudaconv::Backend& cpu_ref() {
    cudaconv::Backend* backend = cudaconv::find_backend("cpu-ref");
    REQUIRE(backend != nullptr);
    return *backend;
}

double depth_max(Depth d) {  // the range random_image draws from
    switch (d) {
        case Depth::u8: return 255.0;
        case Depth::u16: return 65535.0;
        case Depth::f32: return 1000.0;
    }
    return 1.0;
}

// A Mat of the given size, alone or as a ROI inside a larger one whose
// margins hold other random samples (so reading past the ROI shows).
cv::Mat make_input(const Case& c) {
    const int type = cudaconv::test::cv_type(c.in_depth, c.channels);
    if (!c.roi) return cudaconv::test::random_image(c.width, c.height, type, c.seed);
    const cv::Mat parent = cudaconv::test::random_image(c.width + 5, c.height + 3, type, c.seed);
    return parent(cv::Rect(2, 1, c.width, c.height));
}

// Fills a Mat with samples no correct output can equal everywhere: NaN for
// float, random levels for integers, so an unwritten pixel fails.
void fill_garbage(cv::Mat& m, std::uint64_t seed) {
    if (m.depth() == CV_32F) {
        m.setTo(cv::Scalar::all(std::numeric_limits<double>::quiet_NaN()));
    } else {
        cv::RNG rng(seed);
        rng.fill(m, cv::RNG::UNIFORM, 0, m.depth() == CV_8U ? 256 : 65536);
    }
}

// Runs one case through cpu-ref and the OpenCV reference and compares them.
// Returns false when the job has no output (valid with a filter larger than
// the image), after checking job.hpp agrees that it has none.
bool check_case(const Case& c) {
    INFO(describe(c));
    const ConvParams& p = c.params;
    const cudaconv::Size2D out = cudaconv::output_size(c.width, c.height, p);
    // job.hpp's own formula must agree with the reference's crop.
    if (p.border == BorderMode::valid) {
        REQUIRE(out.width == c.width - p.filter.width + 1);
        REQUIRE(out.height == c.height - p.filter.height + 1);
        if (out.width <= 0 || out.height <= 0) {
            CHECK(cudaconv::test::reference_exact(make_input(c), p).empty());
            return false;
        }
    } else {
        REQUIRE(out.width == c.width);
        REQUIRE(out.height == c.height);
    }

    const cv::Mat src = make_input(c);
    const int out_type = cudaconv::test::cv_type(c.out_depth, c.channels);
    const int out_w = static_cast<int>(out.width), out_h = static_cast<int>(out.height);
    cv::Mat dst_parent(out_h + (c.roi ? 2 : 0), out_w + (c.roi ? 3 : 0), out_type);
    fill_garbage(dst_parent, c.seed + 1);
    const cv::Rect dst_rect = c.roi ? cv::Rect(1, 1, out_w, out_h) : cv::Rect(0, 0, out_w, out_h);
    cv::Mat dst = dst_parent(dst_rect);
    const cv::Mat dst_parent_before = dst_parent.clone();

    const cudaconv::Job job{cudaconv::test::const_view(src), cudaconv::test::mutable_view(dst), p};
    {
        const cudaconv::Support support = cpu_ref().can_run(job);
        INFO("cpu-ref refused: " << support.reason);
        REQUIRE(support.ok);
    }
    cpu_ref().run(job, {});

    const cv::Mat expected = cudaconv::test::reference_filter2d(src, p, c.out_depth);
    const Comparison result = compare_images(expected, dst);
    INFO(result.describe());
    CHECK(result.ok);

    if (c.roi) {  // cpu-ref must not write outside the destination view
        cv::Mat after = dst_parent.clone(), before = dst_parent_before.clone();
        after(dst_rect).setTo(cv::Scalar::all(0));
        before(dst_rect).setTo(cv::Scalar::all(0));
        // As bytes, since the NaN padding of float images never equals itself.
        const auto bytes = [](const cv::Mat& m) {
            return cv::Mat(m.rows, m.cols * static_cast<int>(m.elemSize()), CV_8UC1, m.data,
                           m.step[0]);
        };
        cv::Mat differs;
        cv::compare(bytes(after), bytes(before), differs, cv::CMP_NE);
        CHECK(cv::countNonZero(differs) == 0);
    }
    return true;
}

void set_random_anchor(ConvParams& p, std::mt19937_64& gen) {
    p.anchor_x = std::uniform_int_distribution<int>(0, p.filter.width - 1)(gen);
    p.anchor_y = std::uniform_int_distribution<int>(0, p.filter.height - 1)(gen);
}

template <typename T>
const T& pick(const std::vector<T>& options, std::mt19937_64& gen) {
    return options[std::uniform_int_distribution<std::size_t>(0, options.size() - 1)(gen)];
}

// The core's axes. Sizes: 1x1, 1xN, Nx1, a size smaller than most filters,
// two primes and one just past a power of two; filters: 1x1 to 31x31, even,
// non-square, and 9x9 (larger than the small images).
struct Size {
    int width, height;
};
const std::vector<Size> kCoreSizes{{1, 1}, {1, 7}, {13, 1}, {3, 2}, {7, 13}, {31, 17}, {257, 3}};
const std::vector<Size> kCoreFilters{{1, 1}, {2, 2}, {3, 3}, {1, 5},  {5, 1},
                                     {3, 7}, {8, 8}, {9, 9}, {31, 31}};
struct ChannelLayout {
    int channels;
    AlphaMode alpha;
};
const std::vector<ChannelLayout> kChannelLayouts{
    {1, AlphaMode::keep}, {3, AlphaMode::keep}, {4, AlphaMode::keep}, {4, AlphaMode::filter}};
// u8 -> u8 is the common case; f32 -> f32 is the most sensitive (1e-5).
const std::vector<std::pair<Depth, Depth>> kCoreDepths{{Depth::u8, Depth::u8},
                                                       {Depth::f32, Depth::f32}};

}  // namespace

TEST_CASE("cpu-ref equals cv::filter2D on the core product", "[cpu-ref]") {
    const auto& borders = cudaconv::all_border_modes();
    const int border_i = GENERATE(range(0, 6));
    const int layout_i = GENERATE(range(0, 4));
    const int size_i = GENERATE(range(0, 7));
    const int filter_i = GENERATE(range(0, 9));
    const int depth_i = GENERATE(range(0, 2));
    REQUIRE(borders.size() == 6);

    Case c;
    c.seed =
        kCoreSeed + static_cast<std::uint64_t>(
                        (((border_i * 4 + layout_i) * 7 + size_i) * 9 + filter_i) * 2 + depth_i);
    std::mt19937_64 gen(c.seed);
    c.width = kCoreSizes[static_cast<std::size_t>(size_i)].width;
    c.height = kCoreSizes[static_cast<std::size_t>(size_i)].height;
    c.channels = kChannelLayouts[static_cast<std::size_t>(layout_i)].channels;
    c.in_depth = kCoreDepths[static_cast<std::size_t>(depth_i)].first;
    c.out_depth = kCoreDepths[static_cast<std::size_t>(depth_i)].second;
    const Size fsize = kCoreFilters[static_cast<std::size_t>(filter_i)];
    ConvParams& p = c.params;
    p.filter = cudaconv::test::random_filter(fsize.width, fsize.height, c.seed);
    set_random_anchor(p, gen);
    p.border = borders[static_cast<std::size_t>(border_i)];
    // Non-zero, not a level, so a constant border read as 0 or as a pixel fails.
    p.border_value = std::uniform_real_distribution<double>(0.1, 0.9)(gen) * depth_max(c.in_depth);
    p.alpha = kChannelLayouts[static_cast<std::size_t>(layout_i)].alpha;
    check_case(c);
}

TEST_CASE("cpu-ref equals cv::filter2D on a random sample of cases", "[cpu-ref]") {
    const int index = GENERATE(range(0, kSampleCases));
    const std::vector<int> widths{1, 2, 3, 5, 7, 13, 16, 31, 64, 255, 256, 257};
    const std::vector<int> heights{1, 2, 3, 7, 11, 17, 31, 40};
    const std::vector<int> filter_sides{1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31};
    const std::vector<Depth> depths{Depth::u8, Depth::u16, Depth::f32};

    Case c;
    c.seed = kSampleSeed + static_cast<std::uint64_t>(index);
    std::mt19937_64 gen(c.seed);
    std::bernoulli_distribution coin(0.5);
    // Most filters fit the image, the usual case; the rest may exceed it
    // either way (valid then often has no output and is skipped).
    const bool fits = std::bernoulli_distribution(0.7)(gen);
    int fw = 1, fh = 1;
    do {  // redraw the shape until it is of the chosen kind and cheap enough for CI
        c.width = pick(widths, gen);
        c.height = pick(heights, gen);
        fw = pick(filter_sides, gen);
        fh = pick(filter_sides, gen);
    } while ((fits && (fw > c.width || fh > c.height)) ||
             double(c.width) * c.height * fw * fh * 4 > kMaxCaseWork);
    const ChannelLayout layout = pick(kChannelLayouts, gen);
    c.channels = layout.channels;
    c.in_depth = pick(depths, gen);
    c.out_depth = pick(depths, gen);
    c.roi = std::bernoulli_distribution(0.3)(gen);

    ConvParams& p = c.params;
    p.filter = cudaconv::test::random_filter(fw, fh, c.seed);
    if (coin(gen)) {
        p.anchor_x = fw / 2;  // the default
        p.anchor_y = fh / 2;
    } else {
        set_random_anchor(p, gen);
    }
    p.border = pick(cudaconv::all_border_modes(), gen);
    p.border_value =
        coin(gen) ? 0.0  // `zero`
                  : std::uniform_real_distribution<double>(-0.2, 1.2)(gen) * depth_max(c.in_depth);
    p.alpha = layout.alpha;
    // A scale that maps the typical sum into the output's range, so integer
    // outputs are not all saturated; plain 1 and negative scales as well.
    const double out_range = c.out_depth == Depth::f32 ? depth_max(c.in_depth)
                                                       : depth_max(c.out_depth);
    const double fit = out_range / (depth_max(c.in_depth) * std::sqrt(double(fw) * fh));
    p.scale = pick(std::vector<double>{1.0, fit, -fit, 2.5 * fit, 0.37}, gen);
    p.delta = pick(std::vector<double>{0.0, 0.0, out_range / 2, -0.25 * out_range, 0.5}, gen);
    p.take_abs = std::bernoulli_distribution(0.3)(gen);
    check_case(c);
}

TEST_CASE("cpu-ref rounds halves to even exactly like saturate_cast", "[cpu-ref]") {
    // Taps of 0.5 on integer inputs make every other sum an exact .5, which
    // both sides compute exactly, so here nothing short of equality passes.
    const Depth out_depth = GENERATE(Depth::u8, Depth::u16);
    const BorderMode border =
        GENERATE(BorderMode::reflect101, BorderMode::constant, BorderMode::valid);
    const std::uint64_t seed = 0x4A1F0000 + static_cast<std::uint64_t>(border);
    CAPTURE(seed, cudaconv::depth_name(out_depth), cudaconv::border_name(border));
    const cv::Mat src = cudaconv::test::random_image(37, 11, CV_8UC1, seed);
    ConvParams p;
    p.filter.width = 2;
    p.filter.height = 1;
    p.filter.taps = {0.5, 0.5};
    p.anchor_x = 1;
    p.border = border;
    p.border_value = 3.0;
    p.delta = out_depth == Depth::u8 ? 0.0 : 65400.0;  // ties near the u16 top too
    const cudaconv::Size2D size = cudaconv::output_size(src.cols, src.rows, p);
    cv::Mat dst(static_cast<int>(size.height), static_cast<int>(size.width),
                cudaconv::test::cv_type(out_depth, 1));
    cpu_ref().run({cudaconv::test::const_view(src), cudaconv::test::mutable_view(dst), p}, {});
    const Comparison result =
        compare_images(cudaconv::test::reference_filter2d(src, p, out_depth), dst, {0.0, 0.0});
    INFO(result.describe());
    CHECK(result.ok);
}

TEST_CASE("cpu-ref honours warmup and repeat", "[cpu-ref]") {
    const cv::Mat src = cudaconv::test::random_image(9, 5, CV_32FC3, 0x7E9E);
    ConvParams p;
    p.filter = cudaconv::test::random_filter(3, 3, 0x7E9F);
    p.anchor_x = p.anchor_y = 1;
    cv::Mat dst(5, 9, CV_32FC3);
    const cudaconv::RunTimings t = cpu_ref().run(
        {cudaconv::test::const_view(src), cudaconv::test::mutable_view(dst), p}, {2, 3});
    CHECK(t.filter_ms.size() == 3);
    CHECK(compare_images(cudaconv::test::reference_filter2d(src, p, Depth::f32), dst).ok);
}

namespace {

// True convolution computed directly from its definition, independent of
// Filter::rotated_180, cpu-ref and filter2D: the tap (i, j) over output
// (x, y) reads input (x + ax - i, y + ay - j), so the anchor tap reads
// (x, y). `valid` keeps outputs reading only the image, as scipy's
// convolve2d(mode='valid'): out(x, y) = sum k(i, j) in(x + w-1-i, y + h-1-j).
cv::Mat direct_convolution(const cv::Mat& src64, const Filter& k, int ax, int ay, BorderMode border,
                           double border_value) {
    const int cv_mode = border == BorderMode::reflect101  ? cv::BORDER_REFLECT_101
                        : border == BorderMode::reflect   ? cv::BORDER_REFLECT
                        : border == BorderMode::replicate ? cv::BORDER_REPLICATE
                        : border == BorderMode::wrap      ? cv::BORDER_WRAP
                                                          : cv::BORDER_CONSTANT;
    const bool valid = border == BorderMode::valid;
    const int out_w = valid ? src64.cols - k.width + 1 : src64.cols;
    const int out_h = valid ? src64.rows - k.height + 1 : src64.rows;
    const int shift_x = valid ? k.width - 1 : ax, shift_y = valid ? k.height - 1 : ay;
    cv::Mat out(out_h, out_w, CV_64F);
    for (int y = 0; y < out_h; ++y) {
        for (int x = 0; x < out_w; ++x) {
            double sum = 0.0;
            for (int j = 0; j < k.height; ++j) {
                for (int i = 0; i < k.width; ++i) {
                    const int sx = cv::borderInterpolate(x + shift_x - i, src64.cols, cv_mode);
                    const int sy = cv::borderInterpolate(y + shift_y - j, src64.rows, cv_mode);
                    const double v = (sx < 0 || sy < 0) ? border_value : src64.at<double>(sy, sx);
                    sum += k.at(i, j) * v;
                }
            }
            out.at<double>(y, x) = sum;
        }
    }
    return out;
}

cv::Mat as_mat(const Filter& f) {
    cv::Mat m(f.height, f.width, CV_64F);
    for (int j = 0; j < f.height; ++j) {
        for (int i = 0; i < f.width; ++i) m.at<double>(j, i) = f.at(i, j);
    }
    return m;
}

}  // namespace

TEST_CASE("rotated_180 with the mirrored anchor is true convolution", "[cpu-ref]") {
    // --flip reaches cpu-ref as rotated taps around the mirrored anchor
    // (ConvParams); that must be convolution with the original filter
    // around the original anchor.
    const BorderMode border = GENERATE(BorderMode::reflect101, BorderMode::reflect,
                                       BorderMode::replicate, BorderMode::constant,
                                       BorderMode::wrap, BorderMode::valid);
    const Size fsize = GENERATE(Size{1, 1}, Size{2, 2}, Size{3, 3}, Size{2, 5}, Size{4, 3},
                                Size{8, 8}, Size{9, 9});
    const Size isize = GENERATE(Size{3, 2}, Size{7, 13}, Size{16, 9});
    const std::uint64_t seed =
        kFlipSeed + static_cast<std::uint64_t>((int(border) * 16 + fsize.width) * 16 + isize.width);
    std::mt19937_64 gen(seed);
    const Filter k = cudaconv::test::random_filter(fsize.width, fsize.height, seed);
    const int ax = std::uniform_int_distribution<int>(0, k.width - 1)(gen);
    const int ay = std::uniform_int_distribution<int>(0, k.height - 1)(gen);
    CAPTURE(seed, cudaconv::border_name(border), k.width, k.height, ax, ay, isize.width,
            isize.height);

    // rotated_180 is exactly cv::flip(kernel, -1), and an involution.
    const Filter rotated = k.rotated_180();
    cv::Mat flipped;
    cv::flip(as_mat(k), flipped, -1);
    CHECK(cv::norm(as_mat(rotated), flipped, cv::NORM_INF) == 0.0);
    CHECK(rotated.rotated_180().taps == k.taps);

    ConvParams p;
    p.filter = rotated;
    p.anchor_x = k.width - 1 - ax;
    p.anchor_y = k.height - 1 - ay;
    p.border = border;
    p.border_value = 321.5;
    const cudaconv::Size2D size = cudaconv::output_size(isize.width, isize.height, p);
    if (size.width <= 0 || size.height <= 0) return;  // valid, nothing to compare

    const cv::Mat src = cudaconv::test::random_image(isize.width, isize.height, CV_32FC1, seed);
    cv::Mat src64;
    src.convertTo(src64, CV_64F);
    cv::Mat dst(static_cast<int>(size.height), static_cast<int>(size.width), CV_32FC1);
    cpu_ref().run({cudaconv::test::const_view(src), cudaconv::test::mutable_view(dst), p}, {});
    const Comparison result =
        compare_images(direct_convolution(src64, k, ax, ay, border, p.border_value), dst);
    INFO(result.describe());
    CHECK(result.ok);
}

TEST_CASE("normalized divides the taps by their sum", "[cpu-ref]") {
    Filter f = cudaconv::test::random_filter(4, 3, 0x40A1);
    for (double& t : f.taps) t = std::abs(t) + 0.1;  // sum well away from 0
    const Filter n = f.normalized();
    REQUIRE(n.width == f.width);
    REQUIRE(n.height == f.height);
    const double sum = cv::sum(as_mat(f))[0];
    for (std::size_t i = 0; i < f.taps.size(); ++i) {
        CAPTURE(i);
        CHECK(n.taps[i] == Approx(f.taps[i] / sum).epsilon(1e-15));
    }
    CHECK(n.sum() == Approx(1.0).epsilon(1e-14));

    Filter zero_sum;  // left unchanged rather than divided by 0
    zero_sum.width = 3;
    zero_sum.height = 1;
    zero_sum.taps = {-1.0, 0.0, 1.0};
    CHECK(zero_sum.normalized().taps == zero_sum.taps);
}

TEST_CASE("normalized taps keep a flat image flat", "[cpu-ref]") {
    // In every border mode whose border repeats the image, an average of
    // equal samples is that sample.
    const BorderMode border = GENERATE(BorderMode::reflect101, BorderMode::reflect,
                                       BorderMode::replicate, BorderMode::wrap, BorderMode::valid);
    CAPTURE(cudaconv::border_name(border));
    Filter f = cudaconv::test::random_filter(4, 3, 0x40A2);
    for (double& t : f.taps) t = std::abs(t) + 0.1;
    const cv::Mat src(6, 5, CV_32FC1, cv::Scalar::all(123.25));
    ConvParams p;
    p.filter = f.normalized();
    p.anchor_x = 3;
    p.anchor_y = 0;
    p.border = border;
    const cudaconv::Size2D size = cudaconv::output_size(src.cols, src.rows, p);
    cv::Mat dst(static_cast<int>(size.height), static_cast<int>(size.width), CV_32FC1);
    cpu_ref().run({cudaconv::test::const_view(src), cudaconv::test::mutable_view(dst), p}, {});
    const Comparison result =
        compare_images(cv::Mat(dst.rows, dst.cols, CV_64FC1, cv::Scalar::all(123.25)), dst);
    INFO(result.describe());
    CHECK(result.ok);
}

TEST_CASE("the output conversion equals cv::saturate_cast", "[cpu-ref][convert]") {
    // Ties, both edges of both ranges, and values far outside them. Beyond
    // 2^31 OpenCV's own saturate_cast<uchar>(double) wraps through cvRound's
    // int to 0, an artefact docs/SPEC.md's "saturation" does not ask for, so the
    // comparison stays within int range and the far values are checked
    // against plain saturation.
    std::vector<double> values{-1e9,     -65536.5, -256.0,  -1.5,    -1.0,    -0.5,    -0.49,
                               -0.0,     0.0,      0.49,    0.5,     0.51,    1.5,     2.5,
                               3.5,      126.5,    127.5,   254.49,  254.5,   254.51,  255.0,
                               255.5,    256.0,    256.5,   1000.25, 32767.5, 65534.5, 65535.0,
                               65535.49, 65535.5,  65536.0, 1e9};
    std::mt19937_64 gen(0xC0417);
    std::uniform_int_distribution<int> halves(-2 * 70000, 2 * 70000);
    for (int i = 0; i < 20000; ++i) values.push_back(halves(gen) * 0.5);
    std::uniform_real_distribution<double> any(-70000.0, 70000.0);
    for (int i = 0; i < 20000; ++i) values.push_back(any(gen));

    for (const double v : values) {
        CAPTURE(v);
        REQUIRE(cudaconv::saturate_to<std::uint8_t>(v) == cv::saturate_cast<uchar>(v));
        REQUIRE(cudaconv::saturate_to<std::uint16_t>(v) == cv::saturate_cast<ushort>(v));
        REQUIRE(cudaconv::saturate_to<float>(v) == static_cast<float>(v));
        const float vf = static_cast<float>(v);  // the float accumulator of GPU variants
        REQUIRE(cudaconv::saturate_to<std::uint8_t>(vf) == cv::saturate_cast<uchar>(vf));
        REQUIRE(cudaconv::saturate_to<std::uint16_t>(vf) == cv::saturate_cast<ushort>(vf));
    }
    CHECK(cudaconv::saturate_to<std::uint8_t>(1e12) == 255);
    CHECK(cudaconv::saturate_to<std::uint16_t>(1e12) == 65535);
    CHECK(cudaconv::saturate_to<std::uint8_t>(-1e12) == 0);
    CHECK(cudaconv::saturate_to<std::uint8_t>(std::numeric_limits<double>::infinity()) == 255);
    CHECK(cudaconv::saturate_to<std::uint8_t>(std::numeric_limits<double>::quiet_NaN()) == 0);
    CHECK(cudaconv::saturate_to<std::uint16_t>(std::numeric_limits<float>::quiet_NaN()) == 0);

    // scale*sum + delta, then |.|
    CHECK(cudaconv::finish_value(3.0, -2.0, 1.0, false) == -5.0);
    CHECK(cudaconv::finish_value(3.0, -2.0, 1.0, true) == 5.0);
    CHECK(cudaconv::finish_value(-0.25f, 1.0f, 0.0f, true) == 0.25f);
}

TEST_CASE("compare_images applies SPEC tolerances and names the worst sample",
          "[cpu-ref][compare]") {
    using cudaconv::test::Tolerance;
    SECTION("integer outputs: within 1 level") {
        cv::Mat expected(4, 5, CV_8UC3, cv::Scalar(10, 20, 30));
        cv::Mat actual = expected.clone();
        CHECK(compare_images(expected, actual).ok);
        actual.at<cv::Vec3b>(2, 3)[1] = 21;
        const Comparison one = compare_images(expected, actual);
        CHECK(one.ok);
        CHECK(one.failures == 0);
        actual.at<cv::Vec3b>(1, 4)[2] = 33;
        actual.at<cv::Vec3b>(3, 0)[0] = 8;
        const Comparison bad = compare_images(expected, actual);
        CHECK_FALSE(bad.ok);
        CHECK(bad.failures == 2);
        CHECK(bad.samples == 60);
        CHECK(bad.worst.x == 4);
        CHECK(bad.worst.y == 1);
        CHECK(bad.worst.channel == 2);
        CHECK(bad.worst.expected == 30.0);
        CHECK(bad.worst.actual == 33.0);
        CHECK(bad.describe().find("x=4, y=1, channel=2") != std::string::npos);
        CHECK(compare_images(expected, actual, Tolerance{3.0, 0.0}).ok);
    }
    SECTION("an exact expected result is rounded half to even and saturated first") {
        cv::Mat exact(1, 4, CV_64FC1);
        exact.at<double>(0, 0) = 2.5;     // -> 2
        exact.at<double>(0, 1) = 1e12;    // -> 65535, not cvRound's wrapped 0
        exact.at<double>(0, 2) = -7.0;    // -> 0
        exact.at<double>(0, 3) = 100.49;  // -> 100
        cv::Mat actual(1, 4, CV_16UC1);
        actual.at<ushort>(0, 0) = 2;
        actual.at<ushort>(0, 1) = 65535;
        actual.at<ushort>(0, 2) = 0;
        actual.at<ushort>(0, 3) = 100;
        CHECK(compare_images(exact, actual, Tolerance{0.0, 0.0}).ok);
        actual.at<ushort>(0, 0) = 3;
        const Comparison r = compare_images(exact, actual, Tolerance{0.0, 0.0});
        CHECK_FALSE(r.ok);
        CHECK(r.worst.expected == 2.0);
    }
    SECTION("float outputs: relative to the largest magnitude, through ROIs") {
        cv::Mat expected(3, 3, CV_64FC1, cv::Scalar::all(1.0));
        expected.at<double>(0, 0) = -1000.0;  // tolerance 1e-5 * 1000 = 0.01
        cv::Mat parent(5, 6, CV_32FC1, cv::Scalar::all(-5.0));
        cv::Mat actual = parent(cv::Rect(2, 1, 3, 3));
        expected.convertTo(actual, CV_32F);
        actual.at<float>(2, 1) = 1.009f;
        const Comparison near = compare_images(expected, actual);
        CHECK(near.ok);
        CHECK(near.tolerance == Approx(0.01));
        actual.at<float>(2, 1) = 1.011f;
        const Comparison far = compare_images(expected, actual);
        CHECK_FALSE(far.ok);
        CHECK(far.worst.x == 1);
        CHECK(far.worst.y == 2);
    }
    SECTION("NaN never passes") {
        cv::Mat expected(2, 2, CV_32FC1, cv::Scalar::all(5.0));
        cv::Mat actual = expected.clone();
        actual.at<float>(1, 0) = std::numeric_limits<float>::quiet_NaN();
        const Comparison r = compare_images(expected, actual, Tolerance{1e9, 1e9});
        CHECK_FALSE(r.ok);
        CHECK(r.worst.x == 0);
        CHECK(r.worst.y == 1);
        expected.at<float>(1, 0) = std::numeric_limits<float>::quiet_NaN();
        CHECK_FALSE(compare_images(expected, actual).ok);
    }
    SECTION("different shapes cannot be compared") {
        const Comparison r = compare_images(cv::Mat(2, 3, CV_8UC1, cv::Scalar::all(0)),
                                            cv::Mat(3, 2, CV_8UC1, cv::Scalar::all(0)));
        CHECK_FALSE(r.ok);
        CHECK_FALSE(r.problem.empty());
        CHECK_FALSE(compare_images(cv::Mat(2, 2, CV_8UC1, cv::Scalar::all(0)),
                                   cv::Mat(2, 2, CV_8UC3, cv::Scalar::all(0)))
                        .ok);
    }
}
