#include "bench/cases.hpp"

#include <algorithm>
#include <charconv>
#include <string_view>

#include <fmt/format.h>

#include "bench/opencv_peer.hpp"
#include "bench/random_data.hpp"
#include "base/errors.hpp"
#include "base/printable.hpp"
#include "variants/registry.hpp"
#include "filters/numbers.hpp"
#include "filters/spec.hpp"

namespace cudaconv {
namespace {

std::string trimmed(std::string_view text) {
    const auto first = text.find_first_not_of(" \t");
    if (first == std::string_view::npos) return {};
    const auto last = text.find_last_not_of(" \t");
    return std::string(text.substr(first, last - first + 1));
}

std::vector<std::string> split_commas(const std::string& list) {
    std::vector<std::string> fields;
    std::size_t start = 0;
    for (;;) {
        const std::size_t comma = list.find(',', start);
        fields.push_back(trimmed(std::string_view(list).substr(
            start, comma == std::string::npos ? std::string::npos : comma - start)));
        if (comma == std::string::npos) return fields;
        start = comma + 1;
    }
}

// The whole of `text` as a positive decimal integer.
bool parse_positive(std::string_view text, std::int64_t& value) {
    if (text.empty()) return false;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    return ec == std::errc() && end == text.data() + text.size() && value > 0;
}

std::vector<std::string_view> split_x(std::string_view text) {
    std::vector<std::string_view> parts;
    for (;;) {
        const std::size_t x = text.find_first_of("xX");
        parts.push_back(text.substr(0, x));
        if (x == std::string_view::npos) return parts;
        text.remove_prefix(x + 1);
    }
}

bool is_number(const std::string& field) {
    double value = 0.0;
    std::string problem;
    return parse_finite_number(field, value, problem);
}

// `WxH:...` (or `-3x3:` on its way to a size error): the specs whose
// values are comma-separated.
bool is_inline_spec(const std::string& spec) {
    const std::size_t colon = spec.find(':');
    if (colon == std::string::npos) return false;
    const std::string size = spec.substr(0, colon);
    return size.find_first_of("xX") != std::string::npos &&
           std::all_of(size.begin(), size.end(), [](char c) {
               return (c >= '0' && c <= '9') || c == 'x' || c == 'X' || c == '-' || c == '+';
           });
}

template <typename T, typename Same>
void push_unique(std::vector<T>& list, T item, Same same) {
    const bool seen =
        std::any_of(list.begin(), list.end(), [&](const T& other) { return same(other, item); });
    if (!seen) list.push_back(std::move(item));
}

std::string variant_names() {
    std::string names;
    for (const auto& b : all_backends()) {
        names += names.empty() ? "" : ", ";
        names += b->name();
    }
    return names;
}

}  // namespace

std::string BenchSize::label() const { return fmt::format("{}x{}x{}", width, height, channels); }

BenchSize parse_bench_size(const std::string& text) {
    const auto bad = [&](const std::string& why) {
        return UsageError(fmt::format("--size \"{}\": {}", text, why));
    };
    const std::vector<std::string_view> parts = split_x(text);
    if (parts.size() != 2 && parts.size() != 3) {
        throw bad("expected WxH or WxHxC, e.g. 4000x3000 or 4000x3000x1");
    }
    BenchSize size;
    std::int64_t channels = 3;
    if (!parse_positive(parts[0], size.width) || !parse_positive(parts[1], size.height) ||
        (parts.size() == 3 && !parse_positive(parts[2], channels))) {
        throw bad("width, height and channels must be positive integers");
    }
    if (size.width > kMaxBenchSide || size.height > kMaxBenchSide) {
        throw bad(fmt::format("sides are limited to {}", kMaxBenchSide));
    }
    if (channels != 1 && channels != 3 && channels != 4) {
        throw bad("channels must be 1, 3 or 4");
    }
    size.channels = static_cast<int>(channels);
    return size;
}

std::vector<BenchSize> parse_bench_sizes(const std::vector<std::string>& lists) {
    std::vector<BenchSize> sizes;
    for (const std::string& list : lists) {
        for (const std::string& field : split_commas(list)) {
            push_unique(sizes, parse_bench_size(field), std::equal_to<>());
        }
    }
    if (sizes.empty()) throw UsageError("--size: no sizes given");
    return sizes;
}

std::vector<std::string> split_filter_list(const std::string& list) {
    std::vector<std::string> specs;
    for (const std::string& field : split_commas(list)) {
        if (!specs.empty() && is_inline_spec(specs.back()) && is_number(field)) {
            specs.back() += "," + field;
            continue;
        }
        if (field.empty()) {
            throw UsageError(
                fmt::format("-f \"{}\": an empty filter (a stray comma?)", printable_spec(list)));
        }
        specs.push_back(field);
    }
    return specs;
}

Filter make_bench_filter(const std::string& spec) {
    constexpr std::string_view kRandom = "random:";
    if (spec.compare(0, kRandom.size(), kRandom) != 0) {
        // As the filter command checks its final ConvParams: bench runs
        // the taps with scale 1 and a .mat file's offset as the delta.
        Filter f = parse_filter_spec(spec);
        check_float32_range(f, kLargestIntegerSample, 1.0, f.delta, f.source);
        return f;
    }

    const std::string where = filter_where(spec);
    const std::vector<std::string_view> parts =
        split_x(std::string_view(spec).substr(kRandom.size()));
    std::int64_t width = 0, height = 0;
    bool ok = false;
    if (parts.size() == 1) {
        ok = parse_positive(parts[0], width);
        height = width;
    } else if (parts.size() == 2) {
        ok = parse_positive(parts[0], width) && parse_positive(parts[1], height);
    }
    if (!ok) throw FilterError(where + ": expected random:N or random:WxH, e.g. random:15");
    check_filter_size(width, height, where);
    Filter f = random_dense_filter(static_cast<int>(width), static_cast<int>(height));
    f.label = spec;
    return f;
}

std::vector<Filter> parse_bench_filters(const std::vector<std::string>& lists) {
    std::vector<Filter> filters;
    for (const std::string& list : lists) {
        for (const std::string& spec : split_filter_list(list)) {
            push_unique(filters, make_bench_filter(spec),
                        [](const Filter& a, const Filter& b) { return a.label == b.label; });
        }
    }
    if (filters.empty()) throw UsageError("-f: no filters given");
    return filters;
}

std::vector<Depth> parse_bench_depths(const std::vector<std::string>& lists) {
    std::vector<Depth> depths;
    for (const std::string& list : lists) {
        for (const std::string& field : split_commas(list)) {
            const auto depth = parse_depth(field);
            if (!depth) {
                throw UsageError(fmt::format("--depth \"{}\": choose from u8, u16, f32", field));
            }
            push_unique(depths, *depth, std::equal_to<>());
        }
    }
    if (depths.empty()) throw UsageError("--depth: no depths given");
    return depths;
}

std::vector<Backend*> select_bench_variants(const std::string& list) {
    std::vector<Backend*> variants;
    if (trimmed(list) == "all") {
        for (const auto& b : all_backends()) {
            if (b->parent().empty()) variants.push_back(b.get());
        }
        return variants;
    }
    for (const std::string& name : split_commas(list)) {
        // NAME.*: the composite NAME's named paths.
        if (name.size() > 2 && name.compare(name.size() - 2, 2, ".*") == 0) {
            const std::string parent = name.substr(0, name.size() - 2);
            bool any = false;
            for (const auto& b : all_backends()) {
                if (b->parent() != parent) continue;
                push_unique(variants, b.get(), std::equal_to<>());
                any = true;
            }
            if (!any) {
                throw UsageError(fmt::format("-k \"{}\": {} has no named paths", name, parent));
            }
            continue;
        }
        Backend* backend = find_backend(name);
        if (!backend) {
            throw UsageError(fmt::format("-k \"{}\": unknown variant (choose all, or a comma "
                                         "list of: {})",
                                         name, variant_names()));
        }
        push_unique(variants, backend, std::equal_to<>());
    }
    return variants;
}

std::vector<Backend*> select_bench_peers(const std::string& list) {
    static const std::unique_ptr<Backend> opencv = make_opencv_peer();
    std::vector<Backend*> peers;
    for (const std::string& name : split_commas(list)) {
        if (name != kOpenCvPeer) {
            throw UsageError(
                fmt::format("--peer \"{}\": unknown peer (choose {})", name, kOpenCvPeer));
        }
        push_unique(peers, opencv.get(), std::equal_to<>());
    }
    return peers;
}

Tuning tuning_for(const Backend& variant, const Tuning& tuning) {
    Tuning read;
    for (const TuningParam& p : variant.tuning_params()) {
        if (const auto value = tuning.get(p.name)) read.set(std::string(p.name), *value);
    }
    return read;
}

void check_bench_tuning(const Tuning& tuning, const std::vector<Backend*>& variants) {
    for (const auto& [name, value] : tuning.values()) {
        bool read = false;
        for (const Backend* v : variants) {
            const std::vector<TuningParam> params = v->tuning_params();
            const bool reads = std::any_of(params.begin(), params.end(),
                                           [&](const TuningParam& p) { return p.name == name; });
            if (!reads) continue;
            read = true;
            const std::string refusal = tuning_refusal(tuning_for(*v, tuning), params, v->name());
            if (!refusal.empty()) throw UsageError("--param " + name + ": " + refusal);
        }
        if (!read) {
            std::string known;
            for (const Backend* v : variants) {
                for (const TuningParam& p : v->tuning_params()) {
                    known += fmt::format("{}{} {}", known.empty() ? "" : ", ", v->name(), p.name);
                }
            }
            throw UsageError(fmt::format("--param {}: none of the variants selected reads it ({})",
                                         printable(name),
                                         known.empty() ? "they read none" : "they read: " + known));
        }
    }
}

}  // namespace cudaconv
