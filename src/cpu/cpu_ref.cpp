// cpu-ref: the oracle. Plain loops and double accumulation, written to be
// obviously right rather than fast; every other variant and every golden
// file is checked against it, and it is checked against cv::filter2D.
#include <cstdint>
#include <cstring>

#include "core/auto_select.hpp"
#include "core/border.hpp"
#include "core/convert.hpp"
#include "cpu/cpu_registry.hpp"
#include "cpu/cpu_common.hpp"

namespace cudaconv {
namespace {

template <typename T>
T sample(const ConstImageView& img, std::int64_t x, std::int64_t y, int c) {
    T v;
    std::memcpy(&v, img.row(y) + (x * img.channels + c) * sizeof(T), sizeof(T));
    return v;
}

template <typename T>
void store(const ImageView& img, std::int64_t x, std::int64_t y, int c, T v) {
    std::memcpy(img.row(y) + (x * img.channels + c) * sizeof(T), &v, sizeof(T));
}

template <typename In, typename Out>
void correlate(const Job& job) {
    const ConvParams& p = job.params;
    const ConstImageView& src = job.src;
    const ImageView& dst = job.dst;
    const std::int64_t ox = origin_x(p), oy = origin_y(p);
    const std::int64_t cx = centre_offset_x(p), cy = centre_offset_y(p);
    const int filtered = job.filtered_channels();

    for (std::int64_t y = 0; y < dst.height; ++y) {
        for (std::int64_t x = 0; x < dst.width; ++x) {
            for (int c = 0; c < filtered; ++c) {
                double sum = 0.0;
                for (int j = 0; j < p.filter.height; ++j) {
                    const std::int64_t sy = border_index(p.border, y + oy + j, src.height);
                    for (int i = 0; i < p.filter.width; ++i) {
                        const std::int64_t sx = border_index(p.border, x + ox + i, src.width);
                        const double v = (sx == kBorderConstant || sy == kBorderConstant)
                                             ? p.border_value
                                             : static_cast<double>(sample<In>(src, sx, sy, c));
                        sum += p.filter.at(i, j) * v;
                    }
                }
                store<Out>(dst, x, y, c,
                           saturate_to<Out>(finish_value(sum, p.scale, p.delta, p.take_abs)));
            }
            for (int c = filtered; c < src.channels; ++c) {  // alpha kept
                const double a = static_cast<double>(sample<In>(src, x + cx, y + cy, c));
                store<Out>(dst, x, y, c, saturate_to<Out>(a));
            }
        }
    }
}

class CpuRefBackend final : public Backend {
public:
    std::string_view name() const override { return "cpu-ref"; }
    std::optional<int> auto_rank(const Job&) const override { return kRankCpuRef; }
    std::string_view summary() const override {
        return "plain loops, double accumulation: the oracle for all others";
    }
    bool uses_cuda() const override { return false; }
    Support can_run(const Job&) const override { return Support::yes(); }

    RunTimings run(const Job& job, const RunOptions& options) override {
        return time_cpu_runs(options, [&] {
            dispatch_depths(
                job, [&](auto in, auto out) { correlate<decltype(in), decltype(out)>(job); });
        });
    }
};

}  // namespace

std::unique_ptr<Backend> make_cpu_ref_backend() { return std::make_unique<CpuRefBackend>(); }

}  // namespace cudaconv
