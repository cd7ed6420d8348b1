#pragma once
// `-k auto`: which variant runs a job. One pure function of the job, the
// candidates and whether a CUDA device is present, so it can be tested
// without a GPU; its preferences are named constants side by side.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/backend.hpp"

namespace cudaconv {

// The ranks variants give themselves (Backend::auto_rank): auto tries
// lower ranks first. Fastest first, as measured on an H100
// (docs/PERFORMANCE.md, "auto's crossovers", 4000x3000 images): fast for
// every filter up to 33x33 (ahead of fft there with its tensor-core path:
// 31x31 gray f32 402 against 560 us, RGB u8 932 against 1316), the rank-1
// variants next, then the tutorial ladder in its measured order (smem ahead
// of smem-cached: 961 against 7190 us on 15x15 f32). A CUDA variant is
// considered only when a device is present; cpu-ref, the slowest, is the
// last resort and can run anything. Two rules below move a variant up for
// a job, where the measurements say so.
constexpr int kRankFast = 10;
constexpr int kRankFastSeparable = 20;
constexpr int kRankSeparable = 30;
constexpr int kRankUnrolled = 40;
constexpr int kRankSmem = 50;
constexpr int kRankSmemCached = 60;
constexpr int kRankCmem = 70;
constexpr int kRankNaive = 80;
constexpr int kRankFft = 90;
constexpr int kRankCudnn = 100;
constexpr int kRankCpu = 110;
constexpr int kRankCpuRef = 120;

// Whether fast-separable goes ahead of fast for this job (its rank then
// kRankFast - 1):
//  - a rank-1 filter on a gray f32 image: from 9x9
//    (Gaussians of 3, 7, 9 and 15: fast 47.3, 63.1, 108.3 and 210.7 us,
//    fast-separable 67.5, 72.6, 75.8 and 83.4; H100);
//  - a rank-1 filter on a u8 image of any channel count, whose constant
//    border (if any) is a whole u8: fast-separable, on its tensor-core path,
//    first from 7x7, and on RGB from 5x5 (4000x3000 Gaussians, H100: fast
//    at 5 and 7 took RGB 87.9 and 148.2 us, gray
//    41.1 and 68.1, RGBA 149.1 and 241.4; fast-separable RGB 75.3 and 75.5,
//    gray 40.2 and 40.3, RGBA 157.6 and 157.6). A fractional constant border
//    sends the job to fast-separable's CUDA-core path (RGB 9x9: 540 us), so
//    fast stays first there. Two-channel u8 is not measured and goes as
//    gray; RGB f32 and u16 are not measured, so they keep the ranks' order
//    (docs/PERFORMANCE.md).
constexpr int kSeparableFirstSideF32 = 9;
constexpr int kSeparableFirstSideU8 = 7;
constexpr int kSeparableFirstSideRgbU8 = 5;
bool separable_ahead_of_fast(const Job& job);
int fast_separable_rank(const Job& job);

// Whether fft goes ahead of the ladder (its rank then kRankSeparable - 1):
// a dense filter (not rank 1) with more taps than 15x15, where fast refuses
// it (past 33x33, or before Hopper): fft right after the fast variants
// (31x31: 557 us against smem's 3215, cudnn's 5372 and smem-cached's
// 30274), for 8/16-bit outputs only, where fft's documented error bound
// (core/fft_sizes.hpp) keeps results within SPEC's 1 level for images
// and filters of ordinary range; a float output keeps the direct variants
// and SPEC's 1e-5.
constexpr std::size_t kFftAheadOfLadderTaps = 15 * 15;
bool fft_ahead_of_ladder(const Job& job);
int fft_rank(const Job& job);

struct DeviceContext {
    bool has_cuda_device = false;
    std::string no_device_reason;  // why not, when has_cuda_device is false
};

struct AutoChoice {
    Backend* backend = nullptr;  // nullptr when nothing can run the job
    std::string reason;          // for the log line, and the error when none can
};

AutoChoice choose_variant(const Job& job, const std::vector<Backend*>& candidates,
                          const DeviceContext& device);

// A run of one image pays CUDA's start-up alone: on the H100 machine about
// 290 ms from the process's start to a usable context, which decoding a
// 12-megapixel JPEG (about 90 ms) hides only in part, and about 110 ms
// more to tear the context down at exit (docs/PERFORMANCE.md, "One
// image"). A job the `cpu` variant finishes in less than that runs
// there instead, and CUDA is never started. The CPU's time is estimated
// from the job's multiply-adds (plus kCpuSampleOverhead a sample for the
// conversions) at kCpuTapsPerSecondPerCore on every core: measured 2.2e9
// (edge on a 4000x3000 RGB u8 image, 73 ms on 2 cores), taken lower so
// that the estimate errs towards the GPU.
constexpr double kCudaStartupMs = 300.0;
constexpr double kCpuTapsPerSecondPerCore = 1.5e9;
constexpr double kCpuSampleOverhead = 4.0;
double estimated_cpu_ms(std::int64_t samples, std::size_t taps, unsigned cores);
// estimated_cpu_ms for `runs` filterings, when it is under kCudaStartupMs;
// otherwise nothing.
std::optional<double> cpu_ms_before_cuda_starts(std::int64_t samples, std::size_t taps,
                                                unsigned cores, int runs);

// For a run of one image under -k auto: the `cpu` candidate when it can run
// the job and its estimate for `runs` filterings (--warmup plus --repeat)
// is under kCudaStartupMs, with the reason; otherwise backend is nullptr
// and choose_variant decides. cores: the threads the cpu variant runs on.
AutoChoice cpu_for_one_image(const Job& job, const std::vector<Backend*>& candidates,
                             unsigned cores, int runs = 1);

}  // namespace cudaconv
