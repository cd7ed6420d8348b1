#pragma once
// The last step of every path of the cpu variant: a run of float sums
// (out pixels x0 .. x0 + n - 1 of row y, filtered channels interleaved)
// finished as every variant finishes (finish_row), then stored; a kept
// alpha channel copied from the input pixel under the output pixel; and
// a path that finishes its own sums only stores (store_finished).
#include <cstdint>
#include <cstring>

#include "core/convert.hpp"
#include "core/job.hpp"
#include "cpu/finish_row.hpp"

namespace cudaconv {

// Stores `finished` (n * job.filtered_channels() output samples) as out
// pixels x0 .. x0 + n - 1 of row y, a kept alpha channel copied in.
template <typename In, typename Out>
void store_finished(const Job& job, std::int64_t y, std::int64_t x0, std::int64_t n,
                    const Out* finished) {
    const ConvParams& p = job.params;
    const int channels = job.src.channels;
    const int f = job.filtered_channels();
    std::byte* out = job.dst.row(y) + x0 * channels * std::int64_t{sizeof(Out)};
    if (f == channels) {  // no kept alpha: the run as it is
        std::memcpy(out, finished, static_cast<std::size_t>(n * f) * sizeof(Out));
        return;
    }
    const std::byte* alpha_src = job.src.row(y + centre_offset_y(p));
    const std::int64_t cx = x0 + centre_offset_x(p);
    for (std::int64_t x = 0; x < n; ++x) {
        std::byte* pixel = out + x * channels * std::int64_t{sizeof(Out)};
        std::memcpy(pixel, finished + x * f, f * sizeof(Out));
        for (int c = f; c < channels; ++c) {
            const std::byte* a = alpha_src + ((x + cx) * channels + c) * std::int64_t{sizeof(In)};
            In v;
            std::memcpy(&v, a, sizeof(In));
            const Out kept = saturate_to<Out>(static_cast<double>(v));
            std::memcpy(pixel + c * sizeof(Out), &kept, sizeof(Out));
        }
    }
}

// `finished` holds n * job.filtered_channels() samples (scratch).
template <typename In, typename Out>
void store_row(const Job& job, std::int64_t y, std::int64_t x0, std::int64_t n, const float* sums,
               Out* finished) {
    const ConvParams& p = job.params;
    finish_row(sums, n * job.filtered_channels(), p.scale, p.delta, p.take_abs, finished);
    store_finished<In, Out>(job, y, x0, n, finished);
}

}  // namespace cudaconv
