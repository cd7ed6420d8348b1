// The cpu variant's choice of path (src/cpu/cpu_paths.hpp, pure), the FFT
// path's tiles and error bound (src/cpu/cpu_fft.hpp), and which path the
// composite runs on jobs of each kind. The paths' results are tested
// against cpu-ref in test_cpu_variant.cpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <utility>
#include <vector>

#include <opencv2/core.hpp>

#include "core/fft_sizes.hpp"
#include "cpu/cpu_fft.hpp"
#include "cpu/cpu_paths.hpp"
#include "filters/spec.hpp"
#include "variants/registry.hpp"
#include "support/opencv_reference.hpp"
#include "support/random_image.hpp"

namespace cudaconv::test {
namespace {

CpuPath cheapest(const CpuJobShape& shape) { return cpu_paths_by_cost(shape).front(); }

// The shape of a filter of the given taps on a 4000x3000 image.
CpuJobShape shape_of(std::int64_t nonzero_taps, std::int64_t two_pass_loads, int side) {
    return {nonzero_taps, two_pass_loads, fft_tiles(side, side, 4000, 3000).work_per_output};
}

Filter filter_of(const std::string& spec) { return parse_filter_spec(spec); }

// A dense side x side filter of random taps, |taps| summing to 1 (as
// bench's random:N): what the bounds below assume.
Filter normalised_random(int side, std::uint64_t seed) {
    Filter f = random_filter(side, side, seed);
    double sum = 0.0;
    for (const double t : f.taps) sum += std::abs(t);
    for (double& t : f.taps) t /= sum;
    return f;
}

ConvParams centred(const Filter& filter) { return centred_params(filter); }

}  // namespace

TEST_CASE("cpu paths: the measured costs pick direct, two passes or FFT", "[cpu]") {
    // 3x3 filters stay direct, rank 1 or not (sobel-x: 6 taps, 5 loads in
    // two passes; an edge filter: 9 taps, not rank 1).
    CHECK(cheapest(shape_of(9, 0, 3)) == CpuPath::direct);
    CHECK(cheapest(shape_of(6, 5, 3)) == CpuPath::direct);
    // gaussian:5 (25 taps; 10 loads, pairs folded) and box:7 (49; 14)
    // take two passes.
    CHECK(cheapest(shape_of(25, 10, 5)) == CpuPath::two_pass);
    CHECK(cheapest(shape_of(49, 14, 7)) == CpuPath::two_pass);
    // Dense: direct to 17x17, the FFT from 21x21.
    CHECK(cheapest(shape_of(49, 0, 7)) == CpuPath::direct);
    CHECK(cheapest(shape_of(225, 0, 15)) == CpuPath::direct);
    CHECK(cheapest(shape_of(289, 0, 17)) == CpuPath::direct);
    CHECK(cheapest(shape_of(441, 0, 21)) == CpuPath::fft);
    CHECK(cheapest(shape_of(961, 0, 31)) == CpuPath::fft);
    // gaussian:sigma=10 (61x61, rank 1, 122 loads): two passes beat the FFT.
    CHECK(cheapest(shape_of(3721, 122, 61)) == CpuPath::two_pass);
    // Every path that can run is listed, cheapest first; the others not.
    CHECK(cpu_paths_by_cost(shape_of(961, 0, 31)) ==
          std::vector<CpuPath>{CpuPath::fft, CpuPath::direct});
    CHECK(cpu_paths_by_cost({961, 0, 0.0}) == std::vector<CpuPath>{CpuPath::direct});
    CHECK(cpu_paths_by_cost({25, 6, 0.0}) ==
          std::vector<CpuPath>{CpuPath::two_pass, CpuPath::direct});
    // Costs grow with the work.
    CHECK(estimated_ns_per_output(CpuPath::direct, {10, 0, 0.0}) <
          estimated_ns_per_output(CpuPath::direct, {11, 0, 0.0}));
    CHECK(estimated_ns_per_output(CpuPath::fft, {1, 0, 10.0}) <
          estimated_ns_per_output(CpuPath::fft, {1, 0, 11.0}));
    CHECK(std::isinf(estimated_ns_per_output(CpuPath::two_pass, {10, 0, 1.0})));
}

TEST_CASE("cpu paths: the int16 path where it is exact, but two passes for large rank-1 filters",
          "[cpu]") {
    const auto exact = [](CpuJobShape shape) {
        shape.int16_exact = true;
        return shape;
    };
    // sobel-x (6 taps, 5 loads in two passes) and an edge filter (9, not
    // rank 1): int16, where it is exact; else as before.
    CHECK(cheapest(exact(shape_of(6, 5, 3))) == CpuPath::int16);
    CHECK(cheapest(exact(shape_of(9, 0, 3))) == CpuPath::int16);
    CHECK(cheapest(shape_of(6, 5, 3)) == CpuPath::direct);
    // A 5x5 Sobel (20 taps, 9 loads) and 7x7 of ones (49, 14): int16; 9x9
    // and 11x11 of ones (81, 18; 121, 22): two passes, as measured.
    CHECK(cheapest(exact(shape_of(20, 9, 5))) == CpuPath::int16);
    CHECK(cheapest(exact(shape_of(49, 14, 7))) == CpuPath::int16);
    CHECK(cheapest(exact(shape_of(81, 18, 9))) == CpuPath::two_pass);
    CHECK(cheapest(exact(shape_of(121, 22, 11))) == CpuPath::two_pass);
    // Dense integer filters: int16 at any size it can take.
    CHECK(cheapest(exact(shape_of(121, 0, 11))) == CpuPath::int16);
    CHECK(std::isinf(estimated_ns_per_output(CpuPath::int16, shape_of(9, 0, 3))));
}

TEST_CASE("cpu paths: FFT tiles fit the filter and cost least per output", "[cpu]") {
    const FftTiles big = fft_tiles(31, 31, 4000, 3000);
    CHECK(big.width == 256);
    CHECK(big.height == 256);
    CHECK(big.step_x == 226);
    CHECK(big.step_y == 226);
    const FftTiles several = fft_tiles(37, 41, 301, 613);
    CHECK(several.width == 256);
    CHECK(several.height == 256);
    CHECK((301 + several.step_x - 1) / several.step_x == 2);
    CHECK((613 + several.step_y - 1) / several.step_y == 3);
    // A small image: one tile, the whole bordered input at a fast size.
    const FftTiles whole = fft_tiles(31, 31, 10, 10);
    CHECK(whole.width == next_fast_even_fft_size(40));
    CHECK(whole.height == next_fast_fft_size(40));
    CHECK(whole.step_x >= 10);
    CHECK(whole.step_y >= 10);
    // Every choice yields outputs, holds the filter and is even across.
    for (int side : {1, 2, 3, 7, 31, 64, 301, 1000}) {
        for (std::int64_t out : {1, 5, 100, 4000}) {
            const FftTiles t = fft_tiles(side, side, out, out);
            CAPTURE(side, out);
            CHECK(t.width % 2 == 0);
            CHECK(t.width >= side);
            CHECK(t.height >= side);
            CHECK(t.step_x == t.width - side + 1);
            CHECK(t.step_y == t.height - side + 1);
            CHECK(t.step_x >= 1);
            CHECK(t.work_per_output > 0.0);
        }
    }
}

TEST_CASE("cpu paths: the FFT's bound against what cpu promises", "[cpu]") {
    const cv::Mat u8 = random_image(64, 48, CV_8UC3, 0xFF70);
    cv::Mat u8_out(u8.size(), u8.type());
    const Filter gaussian = filter_of("gaussian:31");
    const Job normalised{const_view(u8), mutable_view(u8_out), centred(gaussian)};
    const double largest = max_abs_filtered_input(normalised);
    // 8-bit, normalised: a tiny fraction of a level.
    CHECK(fft_path_error_bound(normalised, largest) < 0.01);
    CHECK(fft_path_within_direct_tolerance(normalised, largest));
    CHECK(fft_path_problem(normalised, largest).empty());

    // Full-range 16-bit samples: double transforms keep the error near the
    // float32 rounding of the result (65535 * 2^-24), far below half a level.
    cv::Mat u16(48, 64, CV_16UC1, cv::Scalar(65535)), u16_out(48, 64, CV_16UC1);
    const Job wide{const_view(u16), mutable_view(u16_out), centred(gaussian)};
    CHECK(fft_path_error_bound(wide, 65535.0) < 0.005);
    CHECK(fft_path_within_direct_tolerance(wide, 65535.0));
    // ...unless a scale multiplies it past half a level.
    Job amplified = wide;
    amplified.params.scale = 200.0;
    CHECK_FALSE(fft_path_within_direct_tolerance(amplified, 65535.0));

    // Float outputs: within the direct path's float32 summation bound for
    // any filter of 2 taps or more; not for a single tap, where that bound
    // is one rounding and the FFT adds its own to it.
    const cv::Mat f32 = random_image(64, 48, CV_32FC1, 0xFF71);
    cv::Mat f32_out(f32.size(), f32.type());
    const Job dense31{const_view(f32), mutable_view(f32_out),
                      centred(normalised_random(31, 0xFF74))};
    CHECK(fft_path_within_direct_tolerance(dense31, max_abs_filtered_input(dense31)));
    const Job dense2{const_view(f32), mutable_view(f32_out), centred(random_filter(2, 1, 0xFF75))};
    CHECK(fft_path_within_direct_tolerance(dense2, max_abs_filtered_input(dense2)));
    const Job one_tap{const_view(f32), mutable_view(f32_out), centred(filter_of("identity"))};
    CHECK_FALSE(fft_path_within_direct_tolerance(one_tap, max_abs_filtered_input(one_tap)));

    // NaN, Inf and magnitudes that would overflow are refused with a reason.
    CHECK(fft_path_problem(dense31, std::numeric_limits<double>::quiet_NaN()) ==
          "the input has NaN or Inf samples, which a transform spreads to every output");
    CHECK(fft_path_problem(dense31, std::numeric_limits<double>::infinity()) ==
          fft_path_problem(dense31, std::numeric_limits<double>::quiet_NaN()));
    CHECK_THAT(fft_path_problem(dense31, 1e299), Catch::Contains("would overflow double"));
}

// The FFT path's checks scan the input in bands on all cores: the same
// answer as the one-thread scan, whichever band holds the largest sample
// or a NaN, on heights that split into bands unevenly.
TEST_CASE("cpu paths: the input scan on all cores finds what one thread finds", "[cpu]") {
    const Filter box = filter_of("box:3");
    for (const int height : {1, 31, 32, 33, 257, 1000}) {
        CAPTURE(height);
        cv::Mat f32 = random_image(40, height, CV_32FC4, 0xFF76 + height);
        cv::Mat out(f32.size(), f32.type());
        Job job{const_view(f32), mutable_view(out), centred(box)};
        CHECK(max_abs_filtered_input_on_all_cores(job) == max_abs_filtered_input(job));
        // The largest filtered sample in the last row; a larger one in the
        // alpha channel, which --alpha keep leaves unfiltered, is not counted.
        f32.at<cv::Vec4f>(height - 1, 39)[2] = -1e6f;
        f32.at<cv::Vec4f>(0, 0)[3] = 1e9f;
        CHECK(max_abs_filtered_input_on_all_cores(job) == 1e6);
        CHECK(max_abs_filtered_input(job) == 1e6);
        f32.at<cv::Vec4f>(height / 2, 7)[1] = std::numeric_limits<float>::quiet_NaN();
        CHECK(std::isnan(max_abs_filtered_input_on_all_cores(job)));
    }
}

TEST_CASE("cpu runs each job on the path its costs and bounds allow", "[cpu]") {
    const auto path_run = [](const cv::Mat& src, const ConvParams& p) {
        cv::Mat dst(src.size(), src.type());
        return find_backend("cpu")->run({const_view(src), mutable_view(dst), p}, {}).path;
    };
    const cv::Mat rgb = random_image(300, 200, CV_8UC3, 0xFF72);
    // Integer taps on u8 to u8: exact sums in int16 (cpu.int16); the same
    // filter on float samples, direct.
    CHECK(path_run(rgb, centred(filter_of("edge"))) == "cpu.int16");
    cv::Mat rgb_f32;
    rgb.convertTo(rgb_f32, CV_32FC3);
    CHECK(path_run(rgb_f32, centred(filter_of("edge"))) == "cpu.direct");
    CHECK(path_run(rgb, centred(filter_of("gaussian:sigma=3"))) == "cpu.two-pass");
    CHECK(path_run(rgb, centred(normalised_random(31, 0xFF74))) == "cpu.fft");
    // Full-range 16-bit too.
    cv::Mat u16(200, 300, CV_16UC1);
    cv::randu(u16, 0, 65536);
    u16.at<std::uint16_t>(0, 0) = 65535;
    CHECK(path_run(u16, centred(normalised_random(31, 0xFF74))) == "cpu.fft");
    // A NaN sample: the FFT would spread it everywhere.
    cv::Mat f32 = random_image(300, 200, CV_32FC1, 0xFF73);
    CHECK(path_run(f32, centred(normalised_random(31, 0xFF74))) == "cpu.fft");
    f32.at<float>(7, 9) = std::numeric_limits<float>::quiet_NaN();
    CHECK(path_run(f32, centred(normalised_random(31, 0xFF74))) == "cpu.direct");
    // The paths by name say so too, and refuse what they cannot run.
    CHECK_FALSE(find_backend("cpu.fft")
                    ->can_run({const_view(f32), {}, centred(normalised_random(31, 0xFF74))})
                    .ok);
    CHECK_FALSE(find_backend("cpu.two-pass")
                    ->can_run({const_view(rgb), {}, centred(filter_of("edge"))})
                    .ok);
}

}  // namespace cudaconv::test

namespace cudaconv::test {

TEST_CASE("cpu.fft stays within its documented bound, measured", "[cpu]") {
    // Float in and out, so nothing rounds the error away: the worst error
    // over varied jobs against the bound core/fft_sizes documents.
    double worst_share = 0.0;
    std::uint64_t seed = 0xFF80;
    // Sizes small enough for cpu-ref under the sanitizers (several tiles a
    // side are test_cpu_variant.cpp's).
    for (const auto& [w, h] : std::vector<std::pair<int, int>>{{160, 120}, {61, 233}, {301, 45}}) {
        for (const Filter& filter :
             {normalised_random(31, seed), normalised_random(17, seed + 1),
              filter_of("gaussian:sigma=4"), filter_of("box:21"), random_filter(23, 9, seed + 2)}) {
            for (const BorderMode border :
                 {BorderMode::reflect101, BorderMode::constant, BorderMode::wrap}) {
                const cv::Mat src = random_image(w, h, CV_32FC3, ++seed);
                ConvParams p = centred_params(filter);
                p.border = border;
                p.border_value = 0.75;
                cv::Mat exact(src.size(), src.type()), actual(src.size(), src.type());
                find_backend("cpu-ref")->run({const_view(src), mutable_view(exact), p}, {});
                const Job job{const_view(src), mutable_view(actual), p};
                find_backend("cpu.fft")->run(job, {});
                const double bound = fft_path_error_bound(job, max_abs_filtered_input(job));
                const double error = cv::norm(exact, actual, cv::NORM_INF);
                CAPTURE(w, h, filter.label, border_name(border), error, bound);
                CHECK(error <= bound);
                worst_share = std::max(worst_share, error / bound);
            }
        }
    }
    std::cout << "cpu.fft: worst error " << worst_share << " of its bound\n";
    CHECK(worst_share > 0.0);
}

}  // namespace cudaconv::test
