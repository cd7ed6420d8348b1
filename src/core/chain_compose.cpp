#include "core/chain_compose.hpp"

#include <cstddef>

#include <fmt/format.h>

#include "filters/rank1.hpp"

namespace cudaconv {
namespace {

bool centred_odd(const ConvParams& p) {
    const Filter& f = p.filter;
    return f.width % 2 == 1 && f.height % 2 == 1 && p.anchor_x == f.width / 2 &&
           p.anchor_y == f.height / 2;
}

// Every tap equals its mirror image left to right and top to bottom.
bool symmetric(const Filter& f) {
    for (int y = 0; y < f.height; ++y) {
        for (int x = 0; x < f.width; ++x) {
            if (f.at(x, y) != f.at(f.width - 1 - x, y) || f.at(x, y) != f.at(x, f.height - 1 - y)) {
                return false;
            }
        }
    }
    return true;
}

bool border_composes(BorderMode border, const std::vector<ConvParams>& steps) {
    switch (border) {
        case BorderMode::valid:
        case BorderMode::wrap: return true;
        case BorderMode::reflect101:
        case BorderMode::reflect:
            for (const ConvParams& p : steps) {
                if (!symmetric(p.filter)) return false;
            }
            return true;
        case BorderMode::replicate:
        case BorderMode::constant: return false;
    }
    return false;
}

// Correlating with `a`, then with `b`, is correlating with their full
// convolution: out(p) = sum over i, j of b(j) a(i) in(p + i + j), each
// index from its filter's centre.
Filter convolved(const Filter& a, const Filter& b) {
    Filter c;
    c.width = a.width + b.width - 1;
    c.height = a.height + b.height - 1;
    c.taps.assign(static_cast<std::size_t>(c.width) * static_cast<std::size_t>(c.height), 0.0);
    for (int ay = 0; ay < a.height; ++ay) {
        for (int ax = 0; ax < a.width; ++ax) {
            const double tap = a.at(ax, ay);
            if (tap == 0.0) continue;
            for (int by = 0; by < b.height; ++by) {
                double* row = &c.taps[static_cast<std::size_t>(ay + by) * c.width + ax];
                for (int bx = 0; bx < b.width; ++bx) row[bx] += tap * b.at(bx, by);
            }
        }
    }
    c.label = a.label + "+" + b.label;
    return c;
}

// The steps' settings let them be one filter (the header's rules, less
// the border's): at least two, each centred and odd, one border and alpha,
// and nothing but taps before the last.
bool steps_may_compose(const std::vector<ConvParams>& steps) {
    if (steps.size() < 2) return false;
    const ConvParams& first = steps.front();
    for (std::size_t i = 0; i < steps.size(); ++i) {
        const ConvParams& p = steps[i];
        if (!centred_odd(p) || p.border != first.border || p.alpha != first.alpha) return false;
        const bool last = i + 1 == steps.size();
        if (!last && (p.scale != 1.0 || p.delta != 0.0 || p.take_abs)) return false;
    }
    return true;
}

// `filter` as the chain's one filter: the steps' border and alpha, the
// last step's scale, delta and --abs.
ConvParams one_filter_params(Filter filter, const std::vector<ConvParams>& steps) {
    ConvParams one = centred_params(std::move(filter));
    one.border = steps.front().border;
    one.border_value = steps.front().border_value;
    one.alpha = steps.front().alpha;
    one.scale = steps.back().scale;
    one.delta = steps.back().delta;
    one.take_abs = steps.back().take_abs;
    return one;
}

// The full convolution of two factors (1-D: a row's or a column's taps).
std::vector<double> convolved_factor(const std::vector<double>& a, const std::vector<double>& b) {
    std::vector<double> c(a.size() + b.size() - 1, 0.0);
    for (std::size_t i = 0; i < a.size(); ++i) {
        for (std::size_t j = 0; j < b.size(); ++j) c[i + j] += a[i] * b[j];
    }
    return c;
}

}  // namespace

bool composes_at_borders(const std::vector<ConvParams>& steps) {
    return !steps.empty() && border_composes(steps.front().border, steps);
}

std::optional<ConvParams> composed_chain(const std::vector<ConvParams>& steps) {
    if (!composes_at_borders(steps) || !steps_may_compose(steps)) return std::nullopt;
    Filter filter = steps.front().filter;
    for (std::size_t i = 1; i < steps.size(); ++i) filter = convolved(filter, steps[i].filter);
    return one_filter_params(std::move(filter), steps);
}

std::optional<ConvParams> composed_rank1_inside(const std::vector<ConvParams>& steps) {
    if (!steps_may_compose(steps)) return std::nullopt;
    std::optional<Rank1Filter> one = separate(steps.front().filter);
    for (std::size_t i = 1; one && i < steps.size(); ++i) {
        const std::optional<Rank1Filter> step = separate(steps[i].filter);
        if (!step) return std::nullopt;
        one->row = convolved_factor(one->row, step->row);
        one->column = convolved_factor(one->column, step->column);
    }
    if (!one) return std::nullopt;
    Filter filter;
    filter.width = static_cast<int>(one->row.size());
    filter.height = static_cast<int>(one->column.size());
    filter.taps.resize(one->row.size() * one->column.size());
    for (std::size_t y = 0; y < one->column.size(); ++y) {
        for (std::size_t x = 0; x < one->row.size(); ++x) {
            filter.taps[y * one->row.size() + x] = one->column[y] * one->row[x];
        }
    }
    filter.label = steps.front().filter.label;
    for (std::size_t i = 1; i < steps.size(); ++i) filter.label += "+" + steps[i].filter.label;
    return one_filter_params(std::move(filter), steps);
}

std::optional<ConvParams> composed_rank1_chain(const std::vector<ConvParams>& steps) {
    std::optional<ConvParams> one = composed_chain(steps);
    if (!one || !separate(one->filter)) return std::nullopt;
    return one;
}

Job one_filter_job(const ConstImageView& src, const ImageView& dst, const ConvParams& one) {
    Job job;
    job.src = src;
    job.dst = dst;
    job.params = one;
    return job;
}

bool runs_as_one_filter(const Backend& variant, const Job& one) {
    return variant.can_run(one).ok && variant.runs_composed_chains(one);
}

std::optional<ChainStep> one_filter_step(Backend& variant, const std::vector<Job>& steps,
                                         const std::optional<ConvParams>& composed) {
    if (!composed || steps.empty()) return std::nullopt;
    ChainStep one{&variant, one_filter_job(steps.front().src, steps.back().dst, *composed)};
    if (!runs_as_one_filter(variant, one.job)) return std::nullopt;
    return one;
}

RunTimings run_as_one_filter(const ChainStep& one, std::size_t steps, const RunOptions& options) {
    RunTimings timings = one.backend->run(one.job, options);
    const Filter& f = one.job.params.filter;
    timings.path = fmt::format("{} ({} steps as one {}x{})",
                               timings.path.empty() ? one.backend->name() : timings.path, steps,
                               f.width, f.height);
    return timings;
}

}  // namespace cudaconv
