#pragma once
// fast's strip path, the named path fast.strips (kernels/fast/fast_strips.cu):
// filters of 3x3, 5x5 and 7x7, one warp a band of rows, no block-wide
// barriers.
#include <cuda_runtime.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/device_job.hpp"
#include "core/hd.hpp"
#include "core/job.hpp"
#include "core/tuning.hpp"

namespace cudaconv {

// Why the strip path cannot run this job, or empty when it can (square:
// 3, 5 or 7, centred; u8 and f32 input of 1, 3 or 4 channels; a u8
// input's constant border a whole u8).
std::string strips_refusal(const DeviceJob& job);

// Output rows a band of the strip path, for `across` bands side by side
// on an image `height` rows tall under a Side x Side filter, f32 or u8
// samples: the measured rule in fast_strips.cu.
int strips_band_rows(std::int64_t across, std::int64_t height, int side, bool float_samples);

// The top of the image in bands of rising height, so that the first wave
// of warps finishes at spread times and the waves after it start spread
// (strips_head says where and why). Rows of bands 0 ... count - 1 are
// low, low + 1, ... rows tall, `group` rows of bands each; the bands of the
// measured height start below them, at image row end().
struct StripHead {
    int count = 0;
    int group = 1;
    int low = 0;

    // Row of bands j < count: its first image row, and its height.
    CC_HD std::int64_t start(int j) const {
        const std::int64_t q = j / group, r = j % group;
        return group * (low * q + q * (q - 1) / 2) + r * (low + q);
    }
    CC_HD int height(int j) const { return low + j / group; }
    CC_HD std::int64_t end() const { return start(count); }
};
// The head for bands `rows` tall, `across` side by side, of f32 or u8
// samples on an image `height` rows tall, where `resident` warps run at
// once: the measured rule in fast_strips.cu. The launch drops a head that
// would reach the image's last row, the rule's or one set by tuning.
StripHead strips_head(std::int64_t across, std::int64_t height, int side, int rows,
                      bool float_samples, std::int64_t resident);

// The integer path: on u8 input, a filter whose taps are all integers in
// [-128, 127] (edge, laplacian, sobel, ...) is summed exactly in 32-bit
// integers with DP4A, 4 taps an instruction, instead of in floats. Its
// outputs are the float path's (both sums are exact); the tuning
// parameter dp4a=0 sums them in floats, for tests and benchmarks of the
// float path on such filters.
// Words of 4 filter columns a filter row for DP4A: row j's taps 4g...4g+3
// as the signed bytes (tap 4g + b in byte b, 0 past the row's end) of word
// j * kDp4aGroups + g. Empty when some tap is not such an integer, or the
// side is not 1...7.
constexpr int kDp4aGroups = 2;  // words a filter row: 7 taps at most
std::vector<std::int32_t> strips_dp4a_words(const std::vector<double>& taps, int side);

// The strip path's tuning parameters, and the values a run takes from them
// in place of the rules above.
std::vector<TuningParam> strips_tuning_params();
struct StripSettings {
    int band_rows = 0;              // 0: strips_band_rows' rule
    std::optional<StripHead> head;  // unset: strips_head's rule
    bool sides_first = true;        // the band's side columns before its middle
    bool dp4a = true;               // integer taps on u8 summed with DP4A
};
StripSettings strip_settings(const Tuning& tuning);
// What strips_prepare chose for a run: the integer path's tap words (none
// for the float path), and the settings.
struct StripPlan {
    std::vector<std::int32_t> dp4a_words;
    StripSettings settings;
    bool integer() const { return !dp4a_words.empty(); }
};
// The taps into the strip path's constant memory, on the job's stream,
// as floats or as the integer path's words (the caller holds
// ConstantTapsLock).
StripPlan strips_prepare(const Job& job, const DeviceJob& device_job, const StripSettings& settings,
                         cudaStream_t stream);
void strips_launch(const DeviceJob& job, const StripPlan& plan, cudaStream_t stream);

}  // namespace cudaconv
