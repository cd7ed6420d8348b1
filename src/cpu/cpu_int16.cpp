// cpu.int16 (cpu/cpu_int16.hpp): the direct path's ring of padded rows
// (cpu/row_ring.hpp) in int16 lanes, the taps grouped by magnitude (a tap
// of +-1 an add or subtract, each other magnitude one multiply) in vector
// code (cpu/simd_int16.hpp), each output row finished in registers and
// written straight into the destination.
#include "cpu/cpu_int16.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <vector>

#include "cpu/row_bands.hpp"
#include "cpu/row_ring.hpp"
#include "cpu/simd_int16.hpp"
#include "cpu/store_row.hpp"

namespace cudaconv {
namespace {

bool is_integer(double v) { return std::isfinite(v) && v == std::nearbyint(v); }

// The plan's taps as Int16Taps wants them: grouped by magnitude, each
// group's positive taps first. Weights are exact in int16 (the bound holds
// every |tap| under 129).
struct TapGroups {
    std::vector<std::size_t> order;  // plan tap index of each source, group by group
    std::vector<std::int16_t> magnitudes;
    std::vector<std::size_t> plus_end, end;

    explicit TapGroups(const RowPlan& plan) {
        const auto weight = [&](std::size_t t) { return static_cast<int>(plan.taps[t].weight); };
        for (std::size_t t = 0; t < plan.taps.size(); ++t) order.push_back(t);
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
            const int ma = std::abs(weight(a)), mb = std::abs(weight(b));
            return ma != mb ? ma < mb : weight(a) > weight(b);
        });
        for (std::size_t k = 0; k < order.size(); ++k) {
            const int w = weight(order[k]);
            if (magnitudes.empty() || magnitudes.back() != std::abs(w)) {
                magnitudes.push_back(static_cast<std::int16_t>(std::abs(w)));
                plus_end.push_back(k);
                end.push_back(k);
            }
            if (w > 0) ++plus_end.back();
            ++end.back();
        }
    }
};

// Output rows [y_begin, y_end), on one worker.
void correlate_rows_int16(const Job& job, const RowPlan& plan, const TapGroups& groups,
                          std::int64_t y_begin, std::int64_t y_end) {
    const ConvParams& p = job.params;
    const std::int64_t oy = origin_y(p);
    const int f = plan.filtered;
    RowRing<std::uint8_t, std::int16_t> ring(job, plan, p.filter.height);
    std::vector<const std::int16_t*> filter_rows(static_cast<std::size_t>(p.filter.height));
    std::vector<const std::int16_t*> sources(groups.order.size());  // where each tap reads
    Int16Taps taps;
    taps.sources = sources.data();
    taps.magnitudes = groups.magnitudes.data();
    taps.plus_end = groups.plus_end.data();
    taps.end = groups.end.data();
    taps.groups = groups.magnitudes.size();
    const auto delta = static_cast<std::int16_t>(p.delta);
    // A kept alpha channel interleaves with the filtered ones: those rows
    // are finished here, then stored around it.
    const bool direct = f == plan.channels;
    std::vector<std::uint8_t> finished(direct ? 0 : static_cast<std::size_t>(plan.out_width * f));

    for (std::int64_t y = y_begin; y < y_end; ++y) {
        for (int j = 0; j < p.filter.height; ++j) {
            filter_rows[static_cast<std::size_t>(j)] = ring.row(y + oy + j);
        }
        for (std::size_t k = 0; k < sources.size(); ++k) {
            const RowPlan::Tap& tap = plan.taps[groups.order[k]];
            sources[k] = filter_rows[static_cast<std::size_t>(tap.j)] + std::int64_t{tap.i} * f;
        }
        auto* out = direct ? reinterpret_cast<std::uint8_t*>(job.dst.row(y)) : finished.data();
        correlate_taps_to_u8(taps, delta, p.take_abs, plan.out_width * f, out);
        if (!direct) store_finished<std::uint8_t, std::uint8_t>(job, y, 0, plan.out_width, out);
    }
}

}  // namespace

std::string int16_path_problem(const Job& job) {
    const ConvParams& p = job.params;
    if (job.src.depth != Depth::u8 || job.dst.depth != Depth::u8) {
        return "not u8 input written as u8";
    }
    if (p.scale != 1.0) return "a scale other than 1";
    if (!is_integer(p.delta)) return "a delta that is not an integer";
    if (p.border == BorderMode::constant &&
        !(is_integer(p.border_value) && p.border_value >= 0.0 && p.border_value <= 255.0)) {
        return "a constant border that is not a whole u8";
    }
    double abs_taps = 0.0;
    for (const double t : p.filter.taps) {
        if (!is_integer(t)) return "taps that are not all integers";
        abs_taps += std::abs(t);
    }
    // Past the limit a sum could wrap around int16 (and a tap need not fit
    // int16 at all); within it, every weight and |delta| fit too.
    if (255.0 * abs_taps + std::abs(p.delta) > kInt16SumLimit) {
        return "sums that could overflow int16 (255 * sum(|taps|) + |delta| over 32767)";
    }
    return "";
}

void correlate_int16(const Job& job) {
    if (job.dst.width <= 0 || job.dst.height <= 0) return;  // `valid`, filter larger than image
    const RowPlan plan = make_row_plan(job);
    const TapGroups groups(plan);
    for_each_band_run(plan.out_height, [&](std::int64_t y_begin, std::int64_t y_end) {
        correlate_rows_int16(job, plan, groups, y_begin, y_end);
    });
}

}  // namespace cudaconv
