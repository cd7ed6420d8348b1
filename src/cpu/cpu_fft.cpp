// Overlap-save with FFTW, in double precision: its error is then far
// below the float32 sums that carry every path's results to the finish,
// so the path is as good as the direct path for every depth, full-range
// 16-bit included (in float32 its bound passed a level there). It costs
// 1.6-1.8x the same path in float here (the transforms alone 1.1-1.2x,
// 256x256: 5.6 ns a sample against 4.9; the planes are twice the bytes).
// For a tile whose top-left output is (x0, y0), the tile's real plane
// holds the padded input from padded pixel (x0, y0) on (padded as the
// direct path pads: pixel px reads input column px + origin_x through the
// border). The filter is laid into a plane of the same size reversed and
// wrapped, K[-j mod H][-i mod W] = w(i, j) / (W H), so that the circular
// convolution of the two is sum w(i, j) * plane[y + j][x + i]: the
// correlation every variant computes, exact (no wrap) for x < W - fw + 1
// and y < H - fh + 1. Samples past the padded input are zero, so that
// nothing but the input takes part in the transform's rounding
// (kernels/fft/fft.cu derives the bound it has).
#include "cpu/cpu_fft.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <utility>
#include <vector>

#include <fftw3.h>
#include <fmt/format.h>
#include <opencv2/core.hpp>

#include "core/border.hpp"
#include "core/fft_sizes.hpp"
#include "cpu/cpu_common.hpp"
#include "cpu/simd_rows.hpp"
#include "cpu/store_row.hpp"

namespace cudaconv {
namespace {

// Tile sides tried: powers of two (FFTW's fastest sizes) from 32 to 8192.
constexpr int kSmallestTileLog2 = 5;
constexpr int kLargestTileLog2 = 13;
// A tile past 2^16 samples is slower per sample than its log2 says (its
// planes outgrow the L2): measured on the 2-core development machine
// (FFTW 3.3.10, estimated double plans, a forward and an inverse
// transform), 5.6 ns a sample at 256x256, 6.2 at 512x512, 15 at 1024x1024.
constexpr double kOutOfCachePenalty = 1.25;
constexpr double kCachedTileSamples = 65536.0;
// Magnitudes past this in a spectrum (samples x taps x transform size)
// could overflow double (1.8e308) in the products.
constexpr double kMaxSpectrumMagnitude = 1e300;
// Tile groups per worker thread, as the direct path's bands: a thread
// slowed by something else is evened out.
constexpr int kGroupsPerThread = 4;

struct FftwFree {
    void operator()(void* p) const { fftw_free(p); }
};
template <typename T>
using FftwBuffer = std::unique_ptr<T[], FftwFree>;

// FFTW's aligned memory: every plane a plan executes on must share the
// alignment of the planes it was made with.
template <typename T>
FftwBuffer<T> fftw_buffer(std::int64_t count) {
    void* p = fftw_malloc(sizeof(T) * static_cast<std::size_t>(count));
    if (p == nullptr) throw std::bad_alloc();
    return FftwBuffer<T>(static_cast<T*>(p));
}

// One tile size's plans, destroyed with the cache when the process exits
// (so that a leak check finds FFTW's memory freed).
struct TilePlans {
    TilePlans() = default;
    TilePlans(const TilePlans&) = delete;
    TilePlans& operator=(const TilePlans&) = delete;
    ~TilePlans() {
        if (forward != nullptr) fftw_destroy_plan(forward);
        if (inverse != nullptr) fftw_destroy_plan(inverse);
    }
    fftw_plan forward = nullptr;  // real plane -> half spectrum
    fftw_plan inverse = nullptr;  // half spectrum -> real plane (unnormalised)
};

// The plans of one tile size, made the first time a process needs them
// and kept until it exits (a batch reuses them for every image). FFTW's
// planner is not thread-safe, so planning is serialised; executing a plan
// on other planes (fftw_execute_dft_r2c) is, from any thread.
const TilePlans& tile_plans(std::int64_t width, std::int64_t height) {
    static std::mutex mutex;
    static std::map<std::pair<std::int64_t, std::int64_t>, std::unique_ptr<TilePlans>> plans;
    const std::lock_guard<std::mutex> lock(mutex);
    std::unique_ptr<TilePlans>& slot = plans[{width, height}];
    if (slot != nullptr) return *slot;
    auto real = fftw_buffer<double>(width * height);
    auto spectrum = fftw_buffer<fftw_complex>((width / 2 + 1) * height);
    auto made = std::make_unique<TilePlans>();
    const int w = static_cast<int>(width), h = static_cast<int>(height);
    // FFTW_ESTIMATE: a plan from FFTW's model of the machine, made in
    // microseconds, and the same plan every run, so the same bits for the
    // same input (goldens). FFTW_MEASURE's timed plans run 1.5x faster but
    // take 0.2-0.8 s to make, more than one image's transforms, and may
    // differ from run to run.
    made->forward = fftw_plan_dft_r2c_2d(h, w, real.get(), spectrum.get(), FFTW_ESTIMATE);
    made->inverse = fftw_plan_dft_c2r_2d(h, w, spectrum.get(), real.get(), FFTW_ESTIMATE);
    if (made->forward == nullptr || made->inverse == nullptr) {
        throw std::runtime_error("FFTW could not plan a " + std::to_string(width) + "x" +
                                 std::to_string(height) + " transform");
    }
    slot = std::move(made);
    return *slot;
}

// The transform's cost per useful output of a width x height tile.
double cost_per_output(std::int64_t width, std::int64_t height, int filter_width,
                       int filter_height) {
    const double samples = static_cast<double>(width) * static_cast<double>(height);
    const double useful = static_cast<double>(width - filter_width + 1) *
                          static_cast<double>(height - filter_height + 1);
    const double penalty = samples > kCachedTileSamples ? kOutOfCachePenalty : 1.0;
    return penalty * samples * std::log2(std::max(samples, 2.0)) / useful;
}

// Tile sides for one axis: the powers of two that yield at least one
// output, and the size of the whole padded axis (a fast size) where that
// is smaller than the largest of them.
std::vector<std::int64_t> tile_sides(int filter_side, std::int64_t used, bool even) {
    std::vector<std::int64_t> sides;
    const std::int64_t whole = even ? next_fast_even_fft_size(used)
                                    : next_fast_fft_size(std::max<std::int64_t>(used, 2));
    for (int k = kSmallestTileLog2; k <= kLargestTileLog2; ++k) {
        const std::int64_t side = std::int64_t{1} << k;
        if (side >= whole) break;
        if (side >= filter_side) sides.push_back(side);
    }
    sides.push_back(whole);
    return sides;
}

FftShape tile_shape(const FftTiles& tiles) {
    FftShape shape;
    shape.padded_width = tiles.width;
    shape.padded_height = tiles.height;
    return shape;
}

// One worker's planes and sums, reused for its tiles.
struct TileScratch {
    TileScratch(const FftTiles& tiles, int filtered)
        : real(fftw_buffer<double>(tiles.width * tiles.height)),
          spectrum(fftw_buffer<fftw_complex>((tiles.width / 2 + 1) * tiles.height)),
          sums(static_cast<std::size_t>(tiles.step_x * tiles.step_y * filtered)) {}
    FftwBuffer<double> real;
    FftwBuffer<fftw_complex> spectrum;
    std::vector<float> sums;  // the tile's outputs, filtered channels interleaved
};

// What every tile shares.
struct FftPlan {
    FftTiles tiles;
    const TilePlans* plans = nullptr;
    FftwBuffer<fftw_complex> filter_spectrum;
    std::int64_t padded_width = 0, padded_height = 0;  // the bordered input's extent
    std::vector<std::int64_t> source_x;  // per padded column: the input column, or kBorderConstant
    std::int64_t tiles_x = 0, tiles_y = 0;
};

FftPlan make_fft_plan(const Job& job) {
    const ConvParams& p = job.params;
    FftPlan plan;
    plan.tiles = fft_tiles(p.filter.width, p.filter.height, job.dst.width, job.dst.height);
    const FftTiles& t = plan.tiles;
    plan.plans = &tile_plans(t.width, t.height);
    plan.padded_width = job.dst.width + p.filter.width - 1;
    plan.padded_height = job.dst.height + p.filter.height - 1;
    plan.source_x.resize(static_cast<std::size_t>(plan.padded_width));
    for (std::int64_t px = 0; px < plan.padded_width; ++px) {
        plan.source_x[static_cast<std::size_t>(px)] =
            border_index(p.border, px + origin_x(p), job.src.width);
    }
    plan.tiles_x = (job.dst.width + t.step_x - 1) / t.step_x;
    plan.tiles_y = (job.dst.height + t.step_y - 1) / t.step_y;

    auto reversed = fftw_buffer<double>(t.width * t.height);
    std::fill(reversed.get(), reversed.get() + t.width * t.height, 0.0);
    const double norm = 1.0 / (static_cast<double>(t.width) * static_cast<double>(t.height));
    for (int j = 0; j < p.filter.height; ++j) {
        for (int i = 0; i < p.filter.width; ++i) {
            const std::int64_t row = positive_mod(-j, t.height), col = positive_mod(-i, t.width);
            reversed[static_cast<std::size_t>(row * t.width + col)] = p.filter.at(i, j) * norm;
        }
    }
    plan.filter_spectrum = fftw_buffer<fftw_complex>((t.width / 2 + 1) * t.height);
    fftw_execute_dft_r2c(plan.plans->forward, reversed.get(), plan.filter_spectrum.get());
    return plan;
}

template <typename In>
In load(const std::byte* p) {  // memcpy: ROI rows need not be aligned for In
    In v;
    std::memcpy(&v, p, sizeof(In));
    return v;
}

// Channel c of the padded input from padded pixel (x0, y0), into the real
// plane; zero past the padded input.
template <typename In>
void gather(const Job& job, const FftPlan& plan, std::int64_t x0, std::int64_t y0, int c,
            double* real) {
    const ConvParams& p = job.params;
    const FftTiles& t = plan.tiles;
    const double border_value = p.border_value;
    const std::int64_t columns = std::clamp(plan.padded_width - x0, std::int64_t{0}, t.width);
    const std::int64_t sample_bytes = job.src.channels * std::int64_t{sizeof(In)};
    for (std::int64_t r = 0; r < t.height; ++r) {
        double* out = real + r * t.width;
        std::fill(out + columns, out + t.width, 0.0);
        const std::int64_t py = y0 + r;
        if (py >= plan.padded_height) {
            std::fill(out, out + columns, 0.0);
            continue;
        }
        const std::int64_t sy = border_index(p.border, py + origin_y(p), job.src.height);
        if (sy == kBorderConstant) {
            std::fill(out, out + columns, border_value);
            continue;
        }
        const std::byte* src = job.src.row(sy) + c * std::int64_t{sizeof(In)};
        for (std::int64_t u = 0; u < columns; ++u) {
            const std::int64_t sx = plan.source_x[static_cast<std::size_t>(x0 + u)];
            out[u] = sx == kBorderConstant ? border_value
                                           : static_cast<double>(load<In>(src + sx * sample_bytes));
        }
    }
}

// The tile whose top-left output is (x0, y0): every filtered channel
// through the transforms, then its rows finished and stored.
template <typename In, typename Out>
void run_tile(const Job& job, const FftPlan& plan, std::int64_t x0, std::int64_t y0,
              TileScratch& scratch, std::vector<Out>& finished) {
    const FftTiles& t = plan.tiles;
    const int f = job.filtered_channels();
    const std::int64_t n_x = std::min(t.step_x, job.dst.width - x0);
    const std::int64_t n_y = std::min(t.step_y, job.dst.height - y0);
    const std::int64_t spectrum_size = (t.width / 2 + 1) * t.height;
    for (int c = 0; c < f; ++c) {
        gather<In>(job, plan, x0, y0, c, scratch.real.get());
        fftw_execute_dft_r2c(plan.plans->forward, scratch.real.get(), scratch.spectrum.get());
        multiply_spectra(&scratch.spectrum[0][0], &plan.filter_spectrum[0][0], spectrum_size);
        fftw_execute_dft_c2r(plan.plans->inverse, scratch.spectrum.get(), scratch.real.get());
        for (std::int64_t r = 0; r < n_y; ++r) {
            const double* result = scratch.real.get() + r * t.width;
            float* sums = scratch.sums.data() + r * n_x * f + c;
            for (std::int64_t u = 0; u < n_x; ++u) sums[u * f] = static_cast<float>(result[u]);
        }
    }
    for (std::int64_t r = 0; r < n_y; ++r) {
        store_row<In, Out>(job, y0 + r, x0, n_x, scratch.sums.data() + r * n_x * f,
                           finished.data());
    }
}

template <typename In, typename Out>
void correlate_tiles(const Job& job) {
    if (job.dst.width <= 0 || job.dst.height <= 0) return;  // `valid`, filter larger than image
    const FftPlan plan = make_fft_plan(job);
    const std::int64_t tiles = plan.tiles_x * plan.tiles_y;
    const std::int64_t threads = std::max(1, cv::getNumThreads());
    const std::int64_t groups = std::clamp(tiles, std::int64_t{1}, threads * kGroupsPerThread);
    const auto group_start = [&](std::int64_t g) { return g * tiles / groups; };
    cv::parallel_for_(cv::Range(0, static_cast<int>(groups)), [&](const cv::Range& range) {
        TileScratch scratch(plan.tiles, job.filtered_channels());
        std::vector<Out> finished(static_cast<std::size_t>(plan.tiles.step_x * job.src.channels));
        for (std::int64_t k = group_start(range.start); k < group_start(range.end); ++k) {
            run_tile<In, Out>(job, plan, (k % plan.tiles_x) * plan.tiles.step_x,
                              (k / plan.tiles_x) * plan.tiles.step_y, scratch, finished);
        }
    });
}

}  // namespace

FftTiles fft_tiles(int filter_width, int filter_height, std::int64_t out_width,
                   std::int64_t out_height) {
    const std::vector<std::int64_t> widths =
        tile_sides(filter_width, out_width + filter_width - 1, true);
    const std::vector<std::int64_t> heights =
        tile_sides(filter_height, out_height + filter_height - 1, false);
    FftTiles best;
    double best_cost = std::numeric_limits<double>::infinity();
    for (const std::int64_t w : widths) {
        for (const std::int64_t h : heights) {
            const double cost = cost_per_output(w, h, filter_width, filter_height);
            if (cost < best_cost) {
                best_cost = cost;
                best = {w, h, w - filter_width + 1, h - filter_height + 1, cost};
            }
        }
    }
    return best;
}

FftTiles fft_tiles(const Job& job) {
    const ConvParams& p = job.params;
    return fft_tiles(p.filter.width, p.filter.height, std::max<std::int64_t>(job.dst.width, 1),
                     std::max<std::int64_t>(job.dst.height, 1));
}

double max_abs_filtered_input_on_all_cores(const Job& job) {
    const std::int64_t rows = job.src.height;
    constexpr std::int64_t kBandRows = 32;
    const int bands = static_cast<int>(std::clamp<std::int64_t>(
        rows / kBandRows, 1, std::int64_t{4} * std::max(1, cv::getNumThreads())));
    std::vector<double> band_max(static_cast<std::size_t>(bands), 0.0);
    cv::parallel_for_(cv::Range(0, bands), [&](const cv::Range& r) {
        for (int b = r.start; b < r.end; ++b) {
            const std::int64_t y0 = b * rows / bands, y1 = (b + 1) * rows / bands;
            Job band = job;
            band.src.data = job.src.data == nullptr ? nullptr : job.src.row(y0);
            band.src.height = y1 - y0;
            band_max[static_cast<std::size_t>(b)] = max_abs_filtered_input(band);
        }
    });
    double largest = 0.0;
    for (const double m : band_max) {
        if (std::isnan(m)) return m;
        largest = std::max(largest, m);
    }
    return largest;
}

std::string fft_path_problem(const Job& job, double max_abs_input) {
    if (!std::isfinite(max_abs_input)) {
        return "the input has NaN or Inf samples, which a transform spreads to every output";
    }
    const FftTiles t = fft_tiles(job);
    const double taps = tap_abs_sum(job);
    const double peak = static_cast<double>(t.width) * static_cast<double>(t.height) *
                        max_abs_input * std::max(1.0, taps);
    if (peak > kMaxSpectrumMagnitude) {
        return fmt::format(
            "samples up to {:g} and taps summing to {:g} would overflow double in a {}x{} "
            "transform",
            max_abs_input, taps, t.width, t.height);
    }
    return "";
}

double fft_path_error_bound(const Job& job, double max_abs_input) {
    // The transforms' error in double, then the float32 rounding of each
    // result (at most S * M) on its way to the finish.
    const double taps = tap_abs_sum(job);
    return std::abs(job.params.scale) *
           (fft_error_bound(tile_shape(fft_tiles(job)), taps, max_abs_input, kFloat64Roundoff) +
            kFloat32Roundoff * taps * max_abs_input);
}

Tolerance fft_path_tolerance(const Job& job) {
    const double bound = fft_path_error_bound(job, max_abs_filtered_input_on_all_cores(job));
    Tolerance t;
    t.integer_levels = 1.0 + std::floor(bound);
    t.float_absolute = bound;
    return t;
}

bool fft_path_within_direct_tolerance(const Job& job, double max_abs_input) {
    const double bound = fft_path_error_bound(job, max_abs_input);
    if (!std::isfinite(bound)) return false;
    if (job.dst.depth != Depth::f32) return bound <= 0.5;
    return bound <= float32_sum_tolerance(job, max_abs_input).float_absolute;
}

void correlate_fft(const Job& job) {
    dispatch_depths(job,
                    [&](auto in, auto out) { correlate_tiles<decltype(in), decltype(out)>(job); });
}

}  // namespace cudaconv
