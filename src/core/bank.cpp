#include "core/bank.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/convert.hpp"

namespace cudaconv {
namespace {

double combined(const std::vector<const float*>& rows, std::int64_t i, Combine how) {
    switch (how) {
        case Combine::magnitude: {
            double squares = 0.0;
            for (const float* r : rows) squares += static_cast<double>(r[i]) * r[i];
            return std::sqrt(squares);
        }
        case Combine::max: {
            double best = rows.front()[i];
            for (const float* r : rows) best = std::max(best, static_cast<double>(r[i]));
            return best;
        }
        case Combine::sum: {
            double total = 0.0;
            for (const float* r : rows) total += r[i];
            return total;
        }
        case Combine::stack: break;  // not one value: stack_rows
    }
    return 0.0;
}

template <typename Out>
void stack_rows(const std::vector<ConstImageView>& responses, int filtered, double scale,
                double delta, bool take_abs, const ImageView& out) {
    const int in_channels = responses.front().channels;
    const int n = static_cast<int>(responses.size());
    for (std::int64_t y = 0; y < out.height; ++y) {
        Out* dst = reinterpret_cast<Out*>(out.row(y));
        for (int k = 0; k < n; ++k) {
            const float* src = reinterpret_cast<const float*>(responses[k].row(y));
            for (std::int64_t x = 0; x < out.width; ++x) {
                for (int c = 0; c < filtered; ++c) {
                    dst[x * out.channels + k * filtered + c] = saturate_to<Out>(finish_value(
                        static_cast<double>(src[x * in_channels + c]), scale, delta, take_abs));
                }
            }
        }
        const float* first = reinterpret_cast<const float*>(responses.front().row(y));
        for (std::int64_t x = 0; x < out.width; ++x) {
            for (int c = filtered; c < in_channels; ++c) {
                dst[x * out.channels + n * filtered + (c - filtered)] =
                    saturate_to<Out>(static_cast<double>(first[x * in_channels + c]));
            }
        }
    }
}

template <typename Out>
void combine_rows(const std::vector<ConstImageView>& responses, Combine how, int filtered,
                  double scale, double delta, bool take_abs, const ImageView& out) {
    std::vector<const float*> rows(responses.size());
    const int channels = out.channels;
    for (std::int64_t y = 0; y < out.height; ++y) {
        for (std::size_t k = 0; k < responses.size(); ++k) {
            rows[k] = reinterpret_cast<const float*>(responses[k].row(y));
        }
        Out* dst = reinterpret_cast<Out*>(out.row(y));
        for (std::int64_t x = 0; x < out.width; ++x) {
            for (int c = 0; c < channels; ++c) {
                const std::int64_t i = x * channels + c;
                dst[i] = c < filtered ? saturate_to<Out>(finish_value(combined(rows, i, how), scale,
                                                                      delta, take_abs))
                                      : saturate_to<Out>(static_cast<double>(rows.front()[i]));
            }
        }
    }
}

}  // namespace

std::optional<Combine> parse_combine(std::string_view name) {
    if (name == "magnitude") return Combine::magnitude;
    if (name == "max") return Combine::max;
    if (name == "sum") return Combine::sum;
    if (name == "stack") return Combine::stack;
    return std::nullopt;
}

std::string_view combine_name(Combine how) {
    switch (how) {
        case Combine::magnitude: return "magnitude";
        case Combine::max: return "max";
        case Combine::sum: return "sum";
        case Combine::stack: return "stack";
    }
    return "";
}

int combined_channels(Combine how, int filters, int channels, int filtered_channels) {
    if (how != Combine::stack) return channels;
    return filters * filtered_channels + (channels - filtered_channels);
}

void combine_responses(const std::vector<ConstImageView>& responses, Combine how,
                       int filtered_channels, double scale, double delta, bool take_abs,
                       const ImageView& out) {
    if (responses.empty()) throw std::invalid_argument("combine_responses: no responses");
    const int channels = responses.front().channels;
    for (const ConstImageView& r : responses) {
        if (r.depth != Depth::f32 || r.width != out.width || r.height != out.height ||
            r.channels != channels) {
            throw std::invalid_argument("combine_responses: a response unlike the output");
        }
    }
    if (filtered_channels < 1 || filtered_channels > channels ||
        out.channels != combined_channels(how, static_cast<int>(responses.size()), channels,
                                          filtered_channels)) {
        throw std::invalid_argument("combine_responses: the output's channels do not fit");
    }
    if (how == Combine::stack) {
        switch (out.depth) {
            case Depth::u8:
                stack_rows<std::uint8_t>(responses, filtered_channels, scale, delta, take_abs, out);
                break;
            case Depth::u16:
                stack_rows<std::uint16_t>(responses, filtered_channels, scale, delta, take_abs,
                                          out);
                break;
            case Depth::f32:
                stack_rows<float>(responses, filtered_channels, scale, delta, take_abs, out);
                break;
        }
        return;
    }
    switch (out.depth) {
        case Depth::u8:
            combine_rows<std::uint8_t>(responses, how, filtered_channels, scale, delta, take_abs,
                                       out);
            break;
        case Depth::u16:
            combine_rows<std::uint16_t>(responses, how, filtered_channels, scale, delta, take_abs,
                                        out);
            break;
        case Depth::f32:
            combine_rows<float>(responses, how, filtered_channels, scale, delta, take_abs, out);
            break;
    }
}

}  // namespace cudaconv
