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

// Whether fast-separable goes ahead of fast's own paths for this job: its
// rank is then kRankFast - 1, and fast itself gives the job to
// fast-separable's kernels (fast.separable, kernels/fast/fast_paths.cu):
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

// One image under -k auto pays CUDA's start-up and teardown alone, where a
// batch shares them. The rule below compares what each side adds to the
// run beyond decoding and encoding, from a model fitted on the H100
// machine (16 cores; scripts/gpu/one-image.sh, docs/PERFORMANCE.md "One
// image"):
//  - the CPU: the `cpu` variant's own estimate of its runs
//    (Backend::estimated_ms: its paths' costs on the run's threads,
//    src/cpu/cpu_paths.hpp);
//  - CUDA: its start-up, begun on a thread of its own while the image
//    decodes, usable kCudaReadyMs after the run starts, so the decode hides
//    that much of it; then the first run's fixed costs (kernels loaded,
//    buffers made), the pixels' upload and download, the filter's runs
//    after the first, and the context's teardown at exit.
// Measured there, 12-megapixel RGB: a JPEG decodes in 68-104 ms and its
// first CUDA run ends 120-140 ms later; a 16-bit PNG or a float PFM
// decodes in 270-530 ms and its first run takes 30-55 ms (16-24 ms of it
// the upload of 72-144 MB); CUDA's processes end 85-120 ms after their
// last image, the CPU's 2-8 ms. The GPU's PNG encoding (it compresses the
// rows on the device) saves 20-40 ms of the CPU's and is left out, which
// errs towards the CPU.
constexpr double kCudaReadyMs = 170.0;
constexpr double kCudaFirstRunMs = 30.0;
constexpr double kCudaTeardownMs = 100.0;
constexpr double kHostDeviceBytesPerMs = 6e6;
// A run after the first: the filter's multiply-adds (a rank-1 filter's
// two passes count width + height) at this rate; the slowest measured of
// the fast variants (edge on RGB u8: 0.3 ms for 3.2e8), so that repeats
// err towards the CPU too.
constexpr double kGpuTapsPerMs = 1e9;

// What the image's decode takes, from its header, for the part of CUDA's
// start-up it hides: JPEG by pixels, PNG and PFM by decoded bytes (the
// H100 machine: 12-megapixel JPEGs 68-104 ms, 72 MB 16-bit PNGs 270-500,
// 144 MB PFMs 340-530, taken near the fast end); 0 for other formats,
// which hides nothing.
enum class DecodeKind { jpeg, png, pfm, other };
constexpr double kJpegDecodeNsPerPixel = 5.5;
constexpr double kPngDecodeNsPerByte = 3.5;
constexpr double kPfmDecodeNsPerByte = 2.3;
double estimated_decode_ms(DecodeKind kind, std::int64_t pixels, std::int64_t decoded_bytes);

// The two sides' estimates for `runs` filterings (--warmup plus --repeat)
// of the job, on `threads` CPU threads, after a decode of `decode_ms`
// (0 where CUDA was not started while the image decoded).
struct OneImageCosts {
    double cpu_ms = 0.0;
    double cuda_ms = 0.0;
};
OneImageCosts one_image_costs(const Job& job, const Backend& cpu, unsigned threads, int runs,
                              double decode_ms);

// For one image under -k auto: the `cpu` candidate when it can run the job
// and costs less than CUDA by one_image_costs, with the reason; otherwise
// backend is nullptr and choose_variant decides.
AutoChoice cpu_for_one_image(const Job& job, const std::vector<Backend*>& candidates,
                             unsigned threads, int runs, double decode_ms);
// The same for several jobs of one image, a chain's steps (core/chain.hpp)
// or a bank's filters (core/bank.hpp): `cpu` when it can run every one and
// their times together cost less than CUDA would.
AutoChoice cpu_for_one_image(const std::vector<Job>& steps, const std::vector<Backend*>& candidates,
                             unsigned threads, int runs, double decode_ms);

}  // namespace cudaconv
