#include "cli/conv_params.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "base/errors.hpp"
#include "base/printable.hpp"

namespace cudaconv {
namespace {

void require_finite(double v, const char* option) {
    if (!std::isfinite(v)) throw UsageError(fmt::format("{} must be a finite number", option));
}

// "X,Y" within the filter; the centre (w/2, h/2) when empty, as OpenCV.
void parse_anchor(const std::string& text, const Filter& f, int* ax, int* ay) {
    if (text.empty()) {
        *ax = f.width / 2;
        *ay = f.height / 2;
        return;
    }
    std::size_t comma = text.find(',');
    std::size_t used_x = 0, used_y = 0;
    try {
        if (comma == std::string::npos) throw std::invalid_argument("no comma");
        *ax = std::stoi(text.substr(0, comma), &used_x);
        *ay = std::stoi(text.substr(comma + 1), &used_y);
    } catch (const std::exception&) {
        throw UsageError(
            fmt::format("--anchor \"{}\": expected X,Y, e.g. --anchor 1,1", printable_spec(text)));
    }
    if (used_x != comma || used_y != text.size() - comma - 1) {
        throw UsageError(
            fmt::format("--anchor \"{}\": expected X,Y, e.g. --anchor 1,1", printable_spec(text)));
    }
    if (*ax < 0 || *ax >= f.width || *ay < 0 || *ay >= f.height) {
        throw UsageError(fmt::format("--anchor {},{} is outside the {}x{} filter (0..{}, 0..{})",
                                     *ax, *ay, f.width, f.height, f.width - 1, f.height - 1));
    }
}

// --anchor places one filter: refused (UsageError) for the several
// filters of a chain or a bank (`kind`), which are each centred.
void refuse_anchor_for_several(const FilterOptions& o, std::size_t filters, const char* kind) {
    if (filters <= 1 || o.anchor.empty()) return;
    throw UsageError(fmt::format("--anchor places one filter's anchor; the {} filters of a {} are "
                                 "each centred (give one -f to use --anchor)",
                                 filters, kind));
}

}  // namespace

ConvParams build_conv_params(const FilterOptions& o, Filter filter, double largest_input,
                             bool warn) {
    ConvParams p;
    bool forces_zero = false;
    const auto border = parse_border(o.border, &forces_zero);
    if (!border) {
        throw UsageError(fmt::format(
            "--border \"{}\": unknown border (choose reflect101, reflect, replicate, constant, "
            "wrap or valid)",
            printable_spec(o.border)));
    }
    p.border = *border;
    if (o.border_value) {
        require_finite(*o.border_value, "--border-value");
        if (p.border != BorderMode::constant || forces_zero) {
            if (warn)
                spdlog::warn("--border-value {} is ignored: it applies to --border constant only",
                             *o.border_value);
        } else {
            p.border_value = *o.border_value;
        }
    }
    require_finite(o.scale, "--scale");
    require_finite(o.delta, "--delta");

    // A libvips .mat offset belongs to the filter's response, before
    // --scale and --delta: scale*(sum + offset) + delta.
    p.scale = o.scale;
    p.delta = o.delta + o.scale * filter.delta;
    p.take_abs = o.take_abs;
    // premultiply: the variants filter all four channels of the
    // premultiplied image (batch/premultiply.hpp); --scale, --delta and
    // --abs would change what the filtered alpha means, which the colour is
    // divided by.
    p.alpha = o.alpha == "keep" ? AlphaMode::keep : AlphaMode::filter;
    if (o.alpha == "premultiply" && (o.scale != 1.0 || o.delta != 0.0 || o.take_abs)) {
        throw UsageError(
            "--alpha premultiply divides each colour by the filtered alpha: --scale, --delta and "
            "--abs would change that alpha; filter with --alpha filter or keep for them");
    }

    if (o.normalize) filter = filter.normalized();
    // The final taps, scale and delta, whatever made them (a file's scale
    // and offset, --normalize, --scale, --delta), on the largest sample an
    // image or the constant border can hold.
    const double border_sample = p.border == BorderMode::constant ? std::abs(p.border_value) : 0.0;
    const double largest_sample = std::max(largest_input, border_sample);
    check_float32_range(filter, largest_sample, p.scale, p.delta,
                        filter.source.empty() ? "-f" : filter.source);
    int ax = 0, ay = 0;
    parse_anchor(o.anchor, filter, &ax, &ay);
    if (o.flip) {
        // Correlating with the rotated filter around the mirrored anchor is
        // convolution with the original around the original anchor.
        filter = filter.rotated_180();
        ax = filter.width - 1 - ax;
        ay = filter.height - 1 - ay;
    }
    p.filter = std::move(filter);
    p.anchor_x = ax;
    p.anchor_y = ay;
    return p;
}

std::vector<ConvParams> build_chain_params(const FilterOptions& o, std::vector<Filter> filters) {
    refuse_anchor_for_several(o, filters.size(), "chain");
    std::vector<ConvParams> steps;
    double largest = kLargestIntegerSample;  // the largest sample a step may read
    for (std::size_t i = 0; i < filters.size(); ++i) {
        FilterOptions step = o;
        if (i + 1 < filters.size()) {  // --scale, --delta and --abs are the last step's
            step.scale = 1.0;
            step.delta = 0.0;
            step.take_abs = false;
        }
        ConvParams p = build_conv_params(step, std::move(filters[i]), largest, i == 0);
        double tap_abs_sum = 0.0;
        for (double t : p.filter.taps) tap_abs_sum += std::abs(t);
        const double border = p.border == BorderMode::constant ? std::abs(p.border_value) : 0.0;
        largest = std::max(largest, border) * tap_abs_sum * std::abs(p.scale) + std::abs(p.delta);
        steps.push_back(std::move(p));
    }
    return steps;
}

std::vector<ConvParams> build_bank_params(const FilterOptions& o, std::vector<Filter> filters) {
    if (o.alpha == "premultiply") {
        throw UsageError("--combine and --alpha premultiply: the combined responses are not "
                         "a colour to divide by alpha; use --alpha keep or filter");
    }
    refuse_anchor_for_several(o, filters.size(), "bank");
    // --scale, --delta and --abs apply to the combination (core/bank.hpp).
    FilterOptions each = o;
    each.scale = 1.0;
    each.delta = 0.0;
    each.take_abs = false;
    std::vector<ConvParams> bank;
    for (std::size_t i = 0; i < filters.size(); ++i) {
        bank.push_back(
            build_conv_params(each, std::move(filters[i]), kLargestIntegerSample, i == 0));
        const Filter& f = bank.back().filter;
        const Filter& first = bank.front().filter;
        if (bank.back().border == BorderMode::valid &&
            (f.width != first.width || f.height != first.height)) {
            throw UsageError(fmt::format(
                "--combine with --border valid: the {}x{} and {}x{} filters would leave "
                "responses of different sizes (give filters of one size, or another border)",
                first.width, first.height, f.width, f.height));
        }
    }
    return bank;
}

std::optional<Combine> parse_combine_option(const std::string& text) {
    const std::optional<Combine> how = parse_combine(text);
    if (!how) {
        throw UsageError(fmt::format("--combine \"{}\": choose magnitude, max, sum or stack",
                                     printable_spec(text)));
    }
    return how;
}

}  // namespace cudaconv
