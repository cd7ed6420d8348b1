#pragma once
// What the cpu variant's row-by-row paths share (cpu.direct, cpu.two-pass
// in cpu_parallel.cpp; cpu.int16 in cpu_int16.cpp): the plan of a job's
// padded rows, and a ring of input rows widened to the lanes a path sums
// in (float, or int16 for u8 samples) and padded by the border policy, so
// that each tap becomes one contiguous multiply-add over a whole row,
// channels still interleaved.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "core/border.hpp"
#include "core/job.hpp"
#include "cpu/simd_int16.hpp"
#include "cpu/simd_rows.hpp"

namespace cudaconv {

// What every band shares: the geometry, where each padded column reads from,
// and the non-zero taps.
struct RowPlan {
    std::int64_t out_width = 0;
    std::int64_t out_height = 0;
    int channels = 1;
    int filtered = 1;                    // channels that get the filter
    std::int64_t padded_width = 0;       // pixels a padded row holds: out_width + w - 1
    std::int64_t origin_x = 0;           // padded pixel px stands for input pixel px + origin_x
    std::int64_t chunks = 0;             // kRowChunk-lane chunks covering out_width * filtered
    std::int64_t row_lanes = 0;          // a padded row plus the slack the last chunk reads
    std::vector<std::int64_t> source_x;  // per padded pixel: the input column, or kBorderConstant
    // Padded pixels [inside_begin, inside_end) read input pixels
    // px + origin_x, all inside the image.
    std::int64_t inside_begin = 0, inside_end = 0;
    float border_value = 0.0f;
    struct Tap {
        float weight;
        int i, j;  // column and row in the filter
    };
    // Zero taps are left out, as cv::filter2D's direct path leaves them out
    // (so a NaN or Inf input under a zero tap does not spread there either).
    std::vector<Tap> taps;
};

RowPlan make_row_plan(const Job& job);

// A sample of type T at p: memcpy, since ROI rows need not be aligned for T.
template <typename T>
T load_sample(const std::byte* p) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
}

// One run of input samples to the ring's lanes: the row's middle, where
// every padded pixel is the input pixel itself, in one vector loop (the
// border's pixels go one at a time). Per pixel, with the border lookup and
// a memcpy a sample, it cost more than all nine taps of a 3x3 filter.
inline void widen(const std::uint8_t* src, std::int64_t n, float* dst) { widen_row(src, n, dst); }
inline void widen(const std::uint16_t* src, std::int64_t n, float* dst) { widen_row(src, n, dst); }
inline void widen(const float* src, std::int64_t n, float* dst) {
    std::memcpy(dst, src, static_cast<std::size_t>(n) * sizeof(float));
}
inline void widen(const std::uint8_t* src, std::int64_t n, std::int16_t* dst) {
    widen_row(src, n, dst);
}

// One worker's rows: a ring of padded input rows of Lane, keyed by the
// (unbordered) input row they stand for, so consecutive output rows widen
// each input row once. Lane holds every In sample and the constant
// border's value exactly (the int16 path checks the value first).
template <typename In, typename Lane = float>
class RowRing {
public:
    // `slots` rows held at once: the filter's height for the direct path.
    RowRing(const Job& job, const RowPlan& plan, std::int64_t slots)
        : job_(job),
          plan_(plan),
          height_(slots),
          // Zero-filled once: the slack past each padded row stays 0.
          rows_(static_cast<std::size_t>(height_ * plan.row_lanes), Lane{0}),
          holds_(static_cast<std::size_t>(height_), std::numeric_limits<std::int64_t>::min()) {}

    // The padded copy of input row v (any integer; the border decides).
    const Lane* row(std::int64_t v) {
        const auto slot = static_cast<std::size_t>(positive_mod(v, height_));
        Lane* out = rows_.data() + static_cast<std::int64_t>(slot) * plan_.row_lanes;
        if (holds_[slot] != v) {
            fill(out, border_index(job_.params.border, v, job_.src.height));
            holds_[slot] = v;
        }
        return out;
    }

private:
    void fill(Lane* out, std::int64_t sy) const {
        const int f = plan_.filtered;
        const std::int64_t lanes = plan_.padded_width * f;
        const auto border_value = static_cast<Lane>(plan_.border_value);
        if (sy == kBorderConstant) {
            std::fill(out, out + lanes, border_value);
            return;
        }
        const std::byte* src = job_.src.row(sy);
        std::int64_t skip_begin = 0, skip_end = 0;  // padded pixels done in one run
        if (f == plan_.channels && reinterpret_cast<std::uintptr_t>(src) % alignof(In) == 0) {
            skip_begin = plan_.inside_begin;
            skip_end = plan_.inside_end;
            const In* first =
                reinterpret_cast<const In*>(src) + (skip_begin + plan_.origin_x) * plan_.channels;
            widen(first, (skip_end - skip_begin) * f, out + skip_begin * f);
        }
        for (std::int64_t px = 0; px < plan_.padded_width; ++px) {
            if (px == skip_begin && skip_end > skip_begin) {
                px = skip_end - 1;
                continue;
            }
            const std::int64_t sx = plan_.source_x[static_cast<std::size_t>(px)];
            Lane* dst = out + px * f;
            if (sx == kBorderConstant) {
                std::fill(dst, dst + f, border_value);
                continue;
            }
            const std::byte* pixel = src + sx * plan_.channels * std::int64_t{sizeof(In)};
            for (int c = 0; c < f; ++c) {
                dst[c] = static_cast<Lane>(load_sample<In>(pixel + c * sizeof(In)));
            }
        }
    }

    const Job& job_;
    const RowPlan& plan_;
    std::int64_t height_;
    std::vector<Lane> rows_;
    std::vector<std::int64_t> holds_;  // input row held by each slot
};

}  // namespace cudaconv
