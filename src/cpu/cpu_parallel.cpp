// cpu: the variant for machines without a GPU, a composite of four paths
// that cpu/cpu_paths.hpp chooses among by measured costs. This file holds
// two of them and the variants; cpu/cpu_fft.cpp the third, for large dense
// filters; cpu/cpu_int16.cpp the fourth, for u8 under small integer taps.
// Direct: output rows are split into bands that run in parallel
// (cv::parallel_for_, on all cores). A band keeps a ring of the
// filter_height input rows its current output row needs, converted to
// float and padded by the border policy, so that each tap becomes one
// contiguous multiply-add over the whole row, channels still interleaved:
// a loop without branches, in vector code (cpu/simd_rows.hpp).
// Two-pass, for a rank-1 filter (gaussian, box, Sobel, ...;
// filters/rank1.hpp): each input row filtered along x as it enters the
// ring, then the ring's rows summed along y, with symmetric taps folded
// (one multiply for two taps of one weight).
// Accumulates in float32, as docs/SPEC.md allows; finishes each row as
// finish_value / saturate_to do for every other variant (finish_row: the
// same results, without a branch a sample).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include <opencv2/core.hpp>

#include "core/auto_select.hpp"
#include "core/border.hpp"
#include "core/convert.hpp"
#include "core/tolerance.hpp"
#include "cpu/cpu_common.hpp"
#include "cpu/cpu_fft.hpp"
#include "cpu/cpu_int16.hpp"
#include "cpu/cpu_paths.hpp"
#include "cpu/cpu_registry.hpp"
#include "cpu/row_bands.hpp"
#include "cpu/row_ring.hpp"
#include "cpu/simd_rows.hpp"
#include "cpu/store_row.hpp"
#include "filters/rank1.hpp"

namespace cudaconv {
namespace {

// Rows are padded to whole chunks of lanes (cpu/row_ring.hpp).
constexpr std::int64_t kChunk = kRowChunk;

// A 1-D pass: the taps of one factor of a rank-1 filter, zero weights
// left out, a symmetric factor's pairs of equal taps folded.
struct Pass {
    struct Tap {
        float weight;
        int first, second;  // tap indices: a pair, or one tap twice in `singles`
    };
    std::vector<Tap> pairs;
    std::vector<Tap> singles;
};

// `fold`: pair a symmetric factor's taps. Not for float inputs, where the
// sum of two samples near float's largest could overflow where each
// product would not.
Pass make_pass(const std::vector<double>& taps, bool fold) {
    Pass pass;
    const int n = static_cast<int>(taps.size());
    const bool symmetric = fold && std::equal(taps.begin(), taps.begin() + n / 2, taps.rbegin());
    for (int i = 0; i < n; ++i) {
        const double w = taps[static_cast<std::size_t>(i)];
        const int mirror = n - 1 - i;
        if (w == 0.0 || (symmetric && mirror < i)) continue;  // a mirror is folded into its partner
        if (symmetric && mirror != i) {
            pass.pairs.push_back({static_cast<float>(w), i, mirror});
        } else {
            pass.singles.push_back({static_cast<float>(w), i, i});
        }
    }
    return pass;
}

// Runs a pass over rows of a ring: where each of its taps reads is set
// per row, the weights once.
class PassRunner {
public:
    explicit PassRunner(const Pass& pass) : pass_(pass) {
        for (const Pass::Tap& tap : pass.pairs) pair_weights_.push_back(tap.weight);
        for (const Pass::Tap& tap : pass.singles) single_weights_.push_back(tap.weight);
        pair_first_.resize(pass.pairs.size());
        pair_second_.resize(pass.pairs.size());
        single_sources_.resize(pass.singles.size());
    }

    // sums (n floats, a multiple of kChunk) = the pass, tap t reading from
    // sources[t] at float 0.
    void run(const std::vector<const float*>& sources, std::int64_t n, float* sums) {
        const auto src = [&](int tap) { return sources[static_cast<std::size_t>(tap)]; };
        for (std::size_t t = 0; t < pass_.pairs.size(); ++t) {
            pair_first_[t] = src(pass_.pairs[t].first);
            pair_second_[t] = src(pass_.pairs[t].second);
        }
        for (std::size_t t = 0; t < pass_.singles.size(); ++t) {
            single_sources_[t] = src(pass_.singles[t].first);
        }
        PassTaps taps;
        taps.pair_first = pair_first_.data();
        taps.pair_second = pair_second_.data();
        taps.pair_weights = pair_weights_.data();
        taps.pairs = pair_weights_.size();
        taps.single_sources = single_sources_.data();
        taps.single_weights = single_weights_.data();
        taps.singles = single_weights_.size();
        correlate_pass(taps, n, sums);
    }

private:
    const Pass& pass_;
    std::vector<float> pair_weights_, single_weights_;
    std::vector<const float*> pair_first_, pair_second_, single_sources_;
};

// Output rows [y_begin, y_end), on one worker.
template <typename In, typename Out>
void correlate_rows(const Job& job, const RowPlan& plan, std::int64_t y_begin, std::int64_t y_end) {
    const ConvParams& p = job.params;
    const std::int64_t oy = origin_y(p);
    const int f = plan.filtered;
    RowRing<In> ring(job, plan, p.filter.height);
    std::vector<float> acc(static_cast<std::size_t>(plan.chunks * kChunk));
    std::vector<const float*> filter_rows(static_cast<std::size_t>(p.filter.height));
    std::vector<const float*> sources(plan.taps.size());  // where each tap reads, at float 0
    std::vector<float> weights;
    for (const RowPlan::Tap& tap : plan.taps) weights.push_back(tap.weight);
    std::vector<Out> finished(static_cast<std::size_t>(plan.out_width * f));

    for (std::int64_t y = y_begin; y < y_end; ++y) {
        for (int j = 0; j < p.filter.height; ++j) {
            filter_rows[static_cast<std::size_t>(j)] = ring.row(y + oy + j);
        }
        for (std::size_t t = 0; t < plan.taps.size(); ++t) {
            const RowPlan::Tap& tap = plan.taps[t];
            sources[t] = filter_rows[static_cast<std::size_t>(tap.j)] + std::int64_t{tap.i} * f;
        }
        correlate_taps(sources.data(), weights.data(), plan.taps.size(), plan.chunks * kChunk,
                       acc.data());
        store_row<In, Out>(job, y, 0, plan.out_width, acc.data(), finished.data());
    }
}

// The separable path's ring: input rows filtered along x as they enter
// (out_width * filtered sums each, in chunks), keyed by the input row.
template <typename In>
class FilteredRows {
public:
    FilteredRows(const Job& job, const RowPlan& plan, const Pass& along_x)
        : padded_(job, plan, 1),
          plan_(plan),
          along_x_(along_x),
          height_(job.params.filter.height),
          rows_(static_cast<std::size_t>(height_ * plan.chunks * kChunk)),
          holds_(static_cast<std::size_t>(height_), std::numeric_limits<std::int64_t>::min()),
          sources_(static_cast<std::size_t>(job.params.filter.width)) {}

    const float* row(std::int64_t v) {
        const auto slot = static_cast<std::size_t>(positive_mod(v, height_));
        float* out = rows_.data() + static_cast<std::int64_t>(slot) * plan_.chunks * kChunk;
        if (holds_[slot] != v) {
            const float* padded = padded_.row(v);
            for (std::size_t i = 0; i < sources_.size(); ++i) {
                sources_[i] = padded + static_cast<std::int64_t>(i) * plan_.filtered;
            }
            along_x_.run(sources_, plan_.chunks * kChunk, out);
            holds_[slot] = v;
        }
        return out;
    }

private:
    RowRing<In> padded_;  // one row: the one being filtered
    const RowPlan& plan_;
    PassRunner along_x_;
    std::int64_t height_;
    std::vector<float> rows_;
    std::vector<std::int64_t> holds_;
    std::vector<const float*> sources_;
};

// Output rows [y_begin, y_end) of a rank-1 filter, on one worker.
template <typename In, typename Out>
void correlate_rows_separable(const Job& job, const RowPlan& plan, const Pass& along_x,
                              const Pass& along_y, std::int64_t y_begin, std::int64_t y_end) {
    const ConvParams& p = job.params;
    const std::int64_t oy = origin_y(p);
    FilteredRows<In> ring(job, plan, along_x);
    PassRunner column_pass(along_y);
    std::vector<float> acc(static_cast<std::size_t>(plan.chunks * kChunk));
    std::vector<const float*> rows(static_cast<std::size_t>(p.filter.height));
    std::vector<Out> finished(static_cast<std::size_t>(plan.out_width * plan.filtered));
    for (std::int64_t y = y_begin; y < y_end; ++y) {
        for (int j = 0; j < p.filter.height; ++j) {
            rows[static_cast<std::size_t>(j)] = ring.row(y + oy + j);
        }
        column_pass.run(rows, plan.chunks * kChunk, acc.data());
        store_row<In, Out>(job, y, 0, plan.out_width, acc.data(), finished.data());
    }
}

// The rank-1 factors, where the filter is rank 1 and has two dimensions
// (a 1-D filter is already a single pass).
std::optional<Rank1Filter> two_pass_factors(const Filter& f) {
    if (f.width < 2 || f.height < 2) return std::nullopt;
    return separate(f);
}

template <typename In>
constexpr bool kFoldPairs = !std::is_same_v<In, float>;  // make_pass's `fold`

// Output rows of the direct or two-pass path, in bands on all cores.
template <typename In, typename Out>
void correlate_rows_in_bands(const Job& job, CpuPath path) {
    if (job.dst.width <= 0 || job.dst.height <= 0) return;  // `valid`, filter larger than image
    const RowPlan plan = make_row_plan(job);
    std::optional<Rank1Filter> rank1;
    if (path == CpuPath::two_pass) rank1 = two_pass_factors(job.params.filter);
    const Pass along_x = rank1 ? make_pass(rank1->row, kFoldPairs<In>) : Pass{};
    const Pass along_y = rank1 ? make_pass(rank1->column, kFoldPairs<In>) : Pass{};
    for_each_band_run(plan.out_height, [&](std::int64_t y_begin, std::int64_t y_end) {
        if (rank1) {
            correlate_rows_separable<In, Out>(job, plan, along_x, along_y, y_begin, y_end);
        } else {
            correlate_rows<In, Out>(job, plan, y_begin, y_end);
        }
    });
}

void run_path(const Job& job, CpuPath path) {
    if (path == CpuPath::fft) return correlate_fft(job);
    if (path == CpuPath::int16) return correlate_int16(job);
    dispatch_depths(job, [&](auto in, auto out) {
        correlate_rows_in_bands<decltype(in), decltype(out)>(job, path);
    });
}

// What cpu_paths_by_cost needs to know about a job.
CpuJobShape job_shape(const Job& job) {
    const Filter& filter = job.params.filter;
    CpuJobShape shape;
    shape.nonzero_taps =
        std::count_if(filter.taps.begin(), filter.taps.end(), [](double t) { return t != 0.0; });
    if (const std::optional<Rank1Filter> rank1 = two_pass_factors(filter)) {
        const bool fold = job.src.depth != Depth::f32;
        const Pass along_x = make_pass(rank1->row, fold), along_y = make_pass(rank1->column, fold);
        shape.two_pass_loads =
            static_cast<std::int64_t>(2 * (along_x.pairs.size() + along_y.pairs.size()) +
                                      along_x.singles.size() + along_y.singles.size());
        shape.column_rows = filter.height;
        shape.column_window_bytes = std::int64_t{filter.height} * job.dst.width *
                                    job.filtered_channels() * std::int64_t{sizeof(float)};
    }
    shape.int16_exact = int16_path_problem(job).empty();
    if (job.dst.width > 0 && job.dst.height > 0) {
        shape.fft_work_per_output = fft_tiles(job).work_per_output;
    }
    return shape;
}

// The cpu variant's choice: the cheapest path by the measured costs; the
// FFT path only where the input is finite and its error bound is within
// what the direct path promises (so `cpu`'s tolerance is the same
// whichever path runs).
CpuPath choose_path(const Job& job) {
    for (const CpuPath path : cpu_paths_by_cost(job_shape(job))) {
        if (path != CpuPath::fft) return path;
        const double largest = max_abs_filtered_input_on_all_cores(job);
        if (fft_path_problem(job, largest).empty() &&
            fft_path_within_direct_tolerance(job, largest)) {
            return path;
        }
    }
    return CpuPath::direct;
}

RunTimings run_timed(const Job& job, const RunOptions& options, CpuPath path) {
    RunTimings timings = time_cpu_runs(options, [&] { run_path(job, path); });
    timings.path = cpu_path_name(path);
    return timings;
}

// `cpu`: the composite auto picks.
class CpuBackend final : public Backend {
public:
    std::string_view name() const override { return "cpu"; }
    std::optional<int> auto_rank(const Job&) const override { return kRankCpu; }
    std::string_view summary() const override {
        return "all cores, float32 sums: picks the cheapest of its paths below by measured costs";
    }
    bool uses_cuda() const override { return false; }
    // Its two-pass and FFT paths.
    bool runs_composed_chains(const Job&) const override { return true; }
    Support can_run(const Job&) const override { return Support::yes(); }
    std::optional<double> estimated_ms(const Job& job, unsigned threads) const override {
        if (job.dst.width <= 0 || job.dst.height <= 0) return 0.0;
        const std::int64_t outputs = job.dst.width * job.dst.height * job.filtered_channels();
        const std::int64_t bytes =
            static_cast<std::int64_t>(job.src.packed_row_bytes()) * job.src.height +
            static_cast<std::int64_t>(job.dst.packed_row_bytes()) * job.dst.height;
        return estimated_cpu_ms(job_shape(job), outputs, bytes, threads);
    }

    RunTimings run(const Job& job, const RunOptions& options) override {
        return run_timed(job, options, choose_path(job));
    }
};

// One path of `cpu` as a variant of its own.
class CpuPathBackend final : public Backend {
public:
    explicit CpuPathBackend(CpuPath path) : path_(path) {}
    std::string_view name() const override { return cpu_path_name(path_); }
    std::string_view parent() const override { return "cpu"; }
    std::optional<int> auto_rank(const Job&) const override { return std::nullopt; }
    std::string_view summary() const override {
        switch (path_) {
            case CpuPath::direct:
                return "every tap a multiply-add over a ring of rows widened to float";
            case CpuPath::two_pass:
                return "rank-1 filters: a row pass, then a column pass, symmetric taps folded "
                       "(integer inputs)";
            case CpuPath::fft:
                return "FFTW: tiles of the input times the filter's spectrum (overlap-save)";
            case CpuPath::int16:
                return "u8 to u8, small integer taps: exact sums in 16-bit lanes, byte for byte "
                       "cpu-ref's";
        }
        return "";
    }
    bool uses_cuda() const override { return false; }
    bool runs_composed_chains(const Job&) const override {
        return path_ == CpuPath::two_pass || path_ == CpuPath::fft;
    }
    Tolerance tolerance(const Job& job) const override {
        if (path_ == CpuPath::int16) return {0.0, 0.0, 0.0};  // exact integer sums
        return path_ == CpuPath::fft ? fft_path_tolerance(job) : float32_sum_tolerance(job);
    }
    Support can_run(const Job& job) const override {
        if (path_ == CpuPath::two_pass && !two_pass_factors(job.params.filter)) {
            return Support::no("the filter is not rank 1 in two dimensions");
        }
        if (path_ == CpuPath::int16) {
            const std::string problem = int16_path_problem(job);
            if (!problem.empty()) return Support::no(problem);
        }
        if (path_ == CpuPath::fft) {
            const std::string problem =
                fft_path_problem(job, max_abs_filtered_input_on_all_cores(job));
            if (!problem.empty()) return Support::no(problem);
        }
        return Support::yes();
    }
    RunTimings run(const Job& job, const RunOptions& options) override {
        return run_timed(job, options, path_);
    }

private:
    CpuPath path_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

std::vector<std::unique_ptr<Backend>> make_cpu_paths() {
    std::vector<std::unique_ptr<Backend>> paths;
    for (const CpuPath path : {CpuPath::direct, CpuPath::int16, CpuPath::two_pass, CpuPath::fft}) {
        paths.push_back(std::make_unique<CpuPathBackend>(path));
    }
    return paths;
}

}  // namespace cudaconv
