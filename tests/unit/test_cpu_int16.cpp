// cpu.int16 (src/cpu/cpu_int16.hpp): u8 to u8 under small integer taps,
// summed in int16 lanes. Its sums are exact, so every output must equal
// cpu-ref's byte for byte: random u8 images of odd sizes (1xN, Nx1, widths
// off every vector width), 1, 3 and 4 channels (alpha kept or filtered),
// every border mode, random integer taps, anchors, deltas and |.|; images
// built to reach the overflow bound exactly; and the rule that sends a job
// past the bound, or with a scale or fraction, to another path.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <opencv2/core.hpp>

#include "cpu/cpu_int16.hpp"
#include "filters/spec.hpp"
#include "variants/registry.hpp"
#include "support/opencv_reference.hpp"
#include "support/random_image.hpp"

namespace cudaconv::test {
namespace {

Backend& variant(std::string_view name) {
    Backend* backend = find_backend(name);
    REQUIRE(backend != nullptr);
    return *backend;
}

// A width x height filter of integer taps whose magnitudes add up to
// exactly abs_sum: each unit goes to a random tap, then each tap gets a
// random sign (some taps stay 0, which the paths leave out).
Filter integer_filter(int width, int height, int abs_sum, std::uint64_t seed) {
    std::mt19937_64 gen(seed);
    Filter f;
    f.width = width;
    f.height = height;
    f.label = "random integer";
    f.taps.assign(static_cast<std::size_t>(width * height), 0.0);
    std::uniform_int_distribution<std::size_t> pick(0, f.taps.size() - 1);
    for (int unit = 0; unit < abs_sum; ++unit) f.taps[pick(gen)] += 1.0;
    for (double& t : f.taps) {
        if (gen() % 2 == 0) t = -t;
    }
    return f;
}

double abs_sum(const Filter& f) {
    double sum = 0.0;
    for (const double t : f.taps) sum += std::abs(t);
    return sum;
}

struct Outcome {
    bool identical = false;
    std::string path;  // what `name` ran (`cpu`'s choice, or the path itself)
};

// Runs `name` on src (a ROI when `roi`, into a ROI of a garbage-filled
// parent) and compares every byte of the output, and of the parent around
// it, with cpu-ref's.
Outcome run_exact(std::string_view name, const cv::Mat& src, const ConvParams& params, bool roi,
                  std::uint64_t seed) {
    const Size2D size = output_size(src.cols, src.rows, params);
    REQUIRE(size.width > 0);
    REQUIRE(size.height > 0);
    const int w = static_cast<int>(size.width), h = static_cast<int>(size.height);
    cv::Mat expected(h, w, src.type());
    variant("cpu-ref").run(Job{const_view(src), mutable_view(expected), params}, {});

    cv::Mat parent(h + (roi ? 2 : 0), w + (roi ? 3 : 0), src.type());
    cv::RNG(seed).fill(parent, cv::RNG::UNIFORM, 0, 256);
    const cv::Rect rect = roi ? cv::Rect(1, 1, w, h) : cv::Rect(0, 0, w, h);
    cv::Mat actual = parent(rect);
    cv::Mat parent_expected = parent.clone();
    expected.copyTo(parent_expected(rect));

    const Job job{const_view(src), mutable_view(actual), params};
    const Support support = variant(name).can_run(job);
    INFO(name << " refused: " << support.reason);
    REQUIRE(support.ok);
    const RunTimings timings = variant(name).run(job, {});
    cv::Mat differs;
    cv::compare(parent.reshape(1), parent_expected.reshape(1), differs, cv::CMP_NE);
    const int wrong = cv::countNonZero(differs);
    if (wrong != 0) {
        cv::Point at;
        cv::minMaxLoc(differs, nullptr, nullptr, nullptr, &at);
        UNSCOPED_INFO(name << ": " << wrong << " bytes differ from cpu-ref; first at parent row "
                           << at.y << ", byte " << at.x);
    }
    return {wrong == 0, timings.path.empty() ? std::string(name) : timings.path};
}

// A src x src image whose samples are 255 where `filter`'s tap at that
// position (modulo the filter's size) is positive (`high`) or negative
// (!`high`), else 0: the outputs whose window lines up with the filter's
// period sum to 255 * (the positive taps) or -255 * (the negative ones),
// the largest and smallest sums any u8 image gives.
cv::Mat extreme_image(const Filter& filter, int width, int height, int channels, bool high) {
    cv::Mat m(height, width, CV_8UC(channels));
    for (int y = 0; y < height; ++y) {
        for (int x = 0; x < width; ++x) {
            const double t = filter.at(x % filter.width, y % filter.height);
            const bool on = high ? t > 0.0 : t < 0.0;
            for (int c = 0; c < channels; ++c)
                m.ptr<std::uint8_t>(y)[x * channels + c] = on ? 255 : 0;
        }
    }
    return m;
}

}  // namespace

TEST_CASE("cpu.int16 takes exactly the jobs its int16 sums hold exactly", "[cpu]") {
    cv::Mat src(5, 7, CV_8UC3, cv::Scalar::all(9)), dst(5, 7, CV_8UC3);
    ConvParams p = centred_params(parse_filter_spec("sobel-x"));
    const auto problem = [&](const ConvParams& params, cv::Mat& out) {
        return int16_path_problem(Job{const_view(src), mutable_view(out), params});
    };
    CHECK(problem(p, dst).empty());
    // Deltas that are integers, |.|, every border, a constant border of a
    // whole u8.
    p.delta = -40.0;
    p.take_abs = true;
    p.border = BorderMode::constant;
    p.border_value = 255.0;
    CHECK(problem(p, dst).empty());
    // Not exact, or not u8 to u8: another path's job.
    ConvParams q = p;
    q.border_value = 256.0;
    CHECK_FALSE(problem(q, dst).empty());
    q = p;
    q.border_value = 2.5;
    CHECK_FALSE(problem(q, dst).empty());
    q = p;
    q.scale = 0.5;
    CHECK_FALSE(problem(q, dst).empty());
    q = p;
    q.delta = 0.5;
    CHECK_FALSE(problem(q, dst).empty());
    q = p;
    q.filter.taps[0] = -1.5;
    CHECK_FALSE(problem(q, dst).empty());
    cv::Mat u16(5, 7, CV_16UC3), f32(5, 7, CV_32FC3);
    CHECK_FALSE(problem(p, u16).empty());
    CHECK_FALSE(problem(p, f32).empty());
    // The bound: 255 * sum(|taps|) + |delta| <= 32767.
    ConvParams at_bound = centred_params(integer_filter(3, 3, 128, 0x1601));
    at_bound.delta = 127.0;  // 255 * 128 + 127 = 32767
    CHECK(problem(at_bound, dst).empty());
    at_bound.delta = -127.0;
    CHECK(problem(at_bound, dst).empty());
    ConvParams past = at_bound;
    past.delta = 128.0;
    CHECK_FALSE(problem(past, dst).empty());
    past = centred_params(integer_filter(3, 3, 129, 0x1602));  // 32895 with no delta
    CHECK_FALSE(problem(past, dst).empty());
    // Refusals say why.
    CHECK(variant("cpu.int16").can_run(Job{const_view(src), mutable_view(dst), past}).reason ==
          problem(past, dst));
}

TEST_CASE("cpu.int16 and cpu equal cpu-ref byte for byte over sizes, borders, channels", "[cpu]") {
    // Widths off every vector width (8, 16, 32 int16 lanes; 128-lane
    // chunks), 1xN and Nx1, several bands (67x61).
    const std::vector<std::pair<int, int>> sizes{{1, 1},  {1, 37},  {41, 1},  {13, 7},  {31, 17},
                                                 {43, 3}, {255, 3}, {257, 9}, {67, 61}, {129, 2}};
    const std::vector<std::pair<int, int>> filters{{3, 3}, {1, 1}, {2, 2}, {5, 5}, {1, 5}, {7, 2}};
    int cases = 0, failed = 0, int16_chosen = 0;
    std::uint64_t seed = 0x16000;
    for (const BorderMode border : all_border_modes()) {
        for (const auto& [w, h] : sizes) {
            for (const auto& [fw, fh] : filters) {
                for (const int channels : {1, 3, 4}) {
                    ++seed;
                    std::mt19937_64 gen(seed);
                    ConvParams p;
                    // Random sums of |taps| up to the bound, some at it.
                    const int sum = gen() % 4 == 0 ? 128 : static_cast<int>(gen() % 129);
                    p.filter = integer_filter(fw, fh, sum, seed);
                    p.anchor_x = static_cast<int>(gen() % static_cast<std::uint64_t>(fw));
                    p.anchor_y = static_cast<int>(gen() % static_cast<std::uint64_t>(fh));
                    p.border = border;
                    p.border_value = static_cast<double>(gen() % 256);
                    const int room = 32767 - 255 * sum;
                    p.delta = static_cast<double>(static_cast<int>(gen() % (2 * room + 1)) - room);
                    p.take_abs = gen() % 2 == 0;
                    p.alpha = gen() % 2 == 0 ? AlphaMode::keep : AlphaMode::filter;
                    const Size2D out = output_size(w, h, p);
                    if (out.width <= 0 || out.height <= 0) continue;  // `valid`: nothing to compare
                    const bool roi = seed % 3 == 1;
                    cv::Mat src = random_image(w + 5, h + 3, CV_8UC(channels), seed);
                    if (roi) src = src(cv::Rect(2, 1, w, h));
                    else src = src(cv::Rect(0, 0, w, h)).clone();
                    CAPTURE(seed, w, h, fw, fh, channels, border_name(border), sum, p.anchor_x,
                            p.anchor_y, p.border_value, p.delta, p.take_abs, roi);
                    for (const std::string_view name : {"cpu.int16", "cpu"}) {
                        const Outcome o = run_exact(name, src, p, roi, seed);
                        ++cases;
                        if (!o.identical) {
                            ++failed;
                            FAIL_CHECK(name << " differs from cpu-ref");
                        }
                        if (name == "cpu" && o.path == "cpu.int16") ++int16_chosen;
                    }
                }
            }
        }
    }
    std::cout << "cpu.int16 vs cpu-ref: " << cases - failed << " of " << cases
              << " byte-identical; cpu chose cpu.int16 in " << int16_chosen << "\n";
    CHECK(failed == 0);
    CHECK(cases > 1000);
    CHECK(int16_chosen > 0);
}

TEST_CASE("cpu.int16 is exact at the overflow bound, and one past it cpu takes another path",
          "[cpu]") {
    const int channels = GENERATE(1, 3, 4);
    const std::uint64_t seed = 0x16B00 + static_cast<std::uint64_t>(channels);
    CAPTURE(seed, channels);
    // 255 * 128 + 127 = 32767: the largest sum, and its negative, reached
    // where the image lines up with the taps: taps all of one sign (the
    // extreme sums), and of mixed signs.
    ConvParams p = centred_params(integer_filter(3, 3, 128, seed));
    p.alpha = AlphaMode::filter;
    for (const int sign : {1, -1, 0}) {
        ConvParams q = p;
        if (sign != 0) {
            for (double& t : q.filter.taps) t = sign * std::abs(t);
        }
        for (const bool high : {true, false}) {
            for (const double delta : {127.0, -127.0, 0.0}) {
                for (const bool take_abs : {false, true}) {
                    q.delta = delta;
                    q.take_abs = take_abs;
                    CAPTURE(sign, high, delta, take_abs);
                    const cv::Mat src = extreme_image(q.filter, 67, 23, channels, high);
                    CHECK(run_exact("cpu.int16", src, q, false, seed).identical);
                    const Outcome cpu = run_exact("cpu", src, q, false, seed);
                    CHECK(cpu.identical);
                    CHECK(cpu.path == "cpu.int16");
                }
            }
        }
    }
    // One past the bound, by the taps or by the delta: cpu.int16 refuses,
    // cpu runs another path, and the result is still cpu-ref's.
    ConvParams taps_past = centred_params(integer_filter(3, 3, 129, seed));
    ConvParams delta_past = p;
    delta_past.delta = 128.0;
    delta_past.take_abs = false;
    for (const ConvParams& past : {taps_past, delta_past}) {
        const cv::Mat src = extreme_image(past.filter, 67, 23, channels, true);
        cv::Mat dst(src.size(), src.type());
        CHECK_FALSE(variant("cpu.int16").can_run({const_view(src), mutable_view(dst), past}).ok);
        const Outcome cpu = run_exact("cpu", src, past, false, seed);
        CHECK(cpu.identical);
        CHECK(cpu.path != "cpu.int16");
    }
}

TEST_CASE("cpu takes cpu.int16 for the named 3x3 integer filters on u8, not elsewhere", "[cpu]") {
    const cv::Mat src = random_image(61, 29, CV_8UC3, 0x16C00);
    const auto path_of = [&](const ConvParams& p, int out_type) {
        cv::Mat dst(src.size(), out_type);
        return variant("cpu").run({const_view(src), mutable_view(dst), p}, {}).path;
    };
    for (const char* name : {"edge", "sobel-x", "sobel-y", "laplacian", "laplacian8", "sharpen",
                             "prewitt-x", "scharr-x", "emboss"}) {
        CAPTURE(name);
        const ConvParams p = centred_params(parse_filter_spec(name));
        CHECK(path_of(p, CV_8UC3) == "cpu.int16");
        CHECK(run_exact("cpu", src, p, false, 0x16C01).identical);
        CHECK(path_of(p, CV_16UC3) != "cpu.int16");  // u8 to u16
        ConvParams scaled = p;
        scaled.scale = 0.25;
        CHECK(path_of(scaled, CV_8UC3) != "cpu.int16");
    }
    // Fractional taps (a box, a gaussian) stay on the float paths.
    CHECK(path_of(centred_params(parse_filter_spec("box:3")), CV_8UC3) != "cpu.int16");
    CHECK(path_of(centred_params(parse_filter_spec("gaussian:3")), CV_8UC3) != "cpu.int16");
}

}  // namespace cudaconv::test
