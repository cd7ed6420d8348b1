#pragma once
// One convolution: source, destination and the parameters every variant
// must honour. Built once from the CLI options; backends only read it.
#include <cstdint>
#include <utility>

#include "core/types.hpp"
#include "filters/filter.hpp"

namespace cudaconv {

struct ConvParams {
    // Correlation taps: --flip and --normalize have already been applied,
    // so variants never see either option.
    Filter filter;
    int anchor_x = 0;  // tap that lands on the output pixel
    int anchor_y = 0;
    BorderMode border = BorderMode::reflect101;
    double border_value = 0.0;  // for BorderMode::constant, in input units
    double scale = 1.0;
    double delta = 0.0;
    bool take_abs = false;
    AlphaMode alpha = AlphaMode::keep;
};

// `filter` with its anchor at its centre (docs/SPEC.md's default anchor)
// and every other setting at its default.
inline ConvParams centred_params(Filter filter) {
    ConvParams p;
    p.anchor_x = filter.width / 2;
    p.anchor_y = filter.height / 2;
    p.filter = std::move(filter);
    return p;
}

struct Job {
    ConstImageView src;
    ImageView dst;  // same channels; depth may differ; size per output_size()
    ConvParams params;

    // Channels that get the filter: a 4th (alpha) channel is copied unless
    // --alpha filter.
    int filtered_channels() const {
        return (src.channels == 4 && params.alpha == AlphaMode::keep) ? 3 : src.channels;
    }
};

struct Size2D {
    std::int64_t width = 0;
    std::int64_t height = 0;
};

// The output size: the input's, or smaller by (w-1)x(h-1) for `valid`
// (zero or negative when the filter is larger than the image).
inline Size2D output_size(std::int64_t width, std::int64_t height, const ConvParams& p) {
    if (p.border != BorderMode::valid) return {width, height};
    return {width - (p.filter.width - 1), height - (p.filter.height - 1)};
}

// For `valid`, output (x, y) is the full-size result at (x + ax, y + ay);
// with the anchor folded in, the tap (i, j) reads input (x + i, y + j).
inline std::int64_t origin_x(const ConvParams& p) {
    return p.border == BorderMode::valid ? 0 : -p.anchor_x;
}
inline std::int64_t origin_y(const ConvParams& p) {
    return p.border == BorderMode::valid ? 0 : -p.anchor_y;
}

}  // namespace cudaconv

namespace cudaconv {

// Where output (x, y) sits in the input: the pixel whose alpha it keeps.
inline std::int64_t centre_offset_x(const ConvParams& p) {
    return p.border == BorderMode::valid ? p.anchor_x : 0;
}
inline std::int64_t centre_offset_y(const ConvParams& p) {
    return p.border == BorderMode::valid ? p.anchor_y : 0;
}

}  // namespace cudaconv
