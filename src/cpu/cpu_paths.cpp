#include "cpu/cpu_paths.hpp"

#include <algorithm>
#include <limits>

namespace cudaconv {
namespace {

// Nanoseconds an output sample on one core: a fixed part (widening the
// input, finishing and storing; a tile's gathering) and a part per load of
// a tap, or per unit of the transforms' work (FftTiles). Fitted to
// `cudaconv bench -k cpu.direct,cpu.two-pass,cpu.fft --no-verify` on the
// 2-core development machine (AVX-512), 4000x3000 gray f32 and RGB u8:
//   direct:   1x1 0.6-0.8 ns, 3x3 0.8-1.0, 7x7 2.1-2.4, 15x15 7.6-8.0;
//   two-pass: 6 loads 0.7-1.0, 10 (gaussian:5) 0.9-1.2, 38 (19x19)
//             2.1-2.7, 122 (61x61) 8.0-9.6;
//   fft:      5.9-8.0 at 5x5 (tiles of 32 a side), 8.8-11.1 at 17x17
//             (128), 10.9-11.7 at 31x31 (256), in double precision.
// So dense filters go to the FFT from about 19x19, rank-1 ones to two
// passes from 5x5; 3x3 filters stay direct.
constexpr double kDirectFixedNs = 0.65;
constexpr double kDirectPerTapNs = 0.032;
constexpr double kTwoPassFixedNs = 0.6;
constexpr double kTwoPassPerLoadNs = 0.055;
constexpr double kFftFixedNs = 3.0;
constexpr double kFftPerWorkNs = 0.4;
// int16 (u8 to u8, integer taps; cpu_int16.hpp): half the direct path's
// costs, as measured beside it on the 2-core development machine, 4000x3000
// RGB and gray u8, `cudaconv bench -k cpu.int16,cpu.direct --no-verify`:
// int16 over direct 0.35-0.47 at 9 taps (edge), 0.47-0.51 at 25 to 121
// (dense random +-1), per tap 0.011 ns against 0.022. So every integer
// job it can run goes to it, except rank-1 ones from about 9x9 (a 9x9 of
// ones: two passes 13.2 ms RGB, int16 17.2; 7x7: 11.1 and 11.3; a 5x5
// Sobel: 8.6 and 6.1).
constexpr double kInt16FixedNs = 0.3;
constexpr double kInt16PerTapNs = 0.016;

// estimated_cpu_ms, fitted to `cudaconv bench -k cpu` on the GPU machine's
// 16 cores (scripts/gpu/one-image.sh; 4000x3000 gray and RGB, u8, u16,
// f32, 9 filters from 3x3 to 121x121):
//  - the arithmetic: the single-core estimates above spread over the
//    threads, each past the first worth kThreadEfficiency of a core
//    (measured 1.3-1.9x the estimate at perfect scaling where the memory
//    does not bound it);
//  - the memory: the input and output at kMemoryBytesPerMs (f32 RGB edge:
//    288 MB in 5.2 ms), plus, where the column pass's rows outgrow a
//    core's L2 (kCoreCacheBytes), every load of it from the shared cache at
//    kSharedCacheBytesPerMs (gaussian:sigma=20, 121 rows: RGB u8 149 ms, gray
//    34 ms, against 31 and 10 ms by the arithmetic alone).
constexpr double kThreadEfficiency = 0.65;
constexpr double kMemoryBytesPerMs = 55e6;
constexpr double kSharedCacheBytesPerMs = 120e6;
constexpr std::int64_t kCoreCacheBytes = std::int64_t{1} << 20;

constexpr CpuPath kAllPaths[] = {CpuPath::direct, CpuPath::two_pass, CpuPath::fft, CpuPath::int16};

}  // namespace

std::string_view cpu_path_name(CpuPath path) {
    switch (path) {
        case CpuPath::direct: return "cpu.direct";
        case CpuPath::two_pass: return "cpu.two-pass";
        case CpuPath::fft: return "cpu.fft";
        case CpuPath::int16: return "cpu.int16";
    }
    return "cpu.direct";
}

double estimated_ns_per_output(CpuPath path, const CpuJobShape& shape) {
    constexpr double kCannot = std::numeric_limits<double>::infinity();
    switch (path) {
        case CpuPath::direct:
            return kDirectFixedNs + kDirectPerTapNs * static_cast<double>(shape.nonzero_taps);
        case CpuPath::two_pass:
            if (shape.two_pass_loads <= 0) return kCannot;
            return kTwoPassFixedNs + kTwoPassPerLoadNs * static_cast<double>(shape.two_pass_loads);
        case CpuPath::fft:
            if (shape.fft_work_per_output <= 0.0) return kCannot;
            return kFftFixedNs + kFftPerWorkNs * shape.fft_work_per_output;
        case CpuPath::int16:
            if (!shape.int16_exact) return kCannot;
            return kInt16FixedNs + kInt16PerTapNs * static_cast<double>(shape.nonzero_taps);
    }
    return kCannot;
}

double estimated_cpu_ms(const CpuJobShape& shape, std::int64_t outputs, std::int64_t memory_bytes,
                        unsigned threads) {
    const std::vector<CpuPath> paths = cpu_paths_by_cost(shape);
    if (paths.empty()) return std::numeric_limits<double>::infinity();
    const CpuPath path = paths.front();
    const double cores = 1.0 + kThreadEfficiency * (std::max(1u, threads) - 1);
    const double arithmetic_ms =
        1e-6 * estimated_ns_per_output(path, shape) * static_cast<double>(outputs) / cores;
    double memory_ms = static_cast<double>(memory_bytes) / kMemoryBytesPerMs;
    if (path == CpuPath::two_pass && shape.column_window_bytes > kCoreCacheBytes) {
        const double loads = static_cast<double>(shape.column_rows) * static_cast<double>(outputs);
        memory_ms += loads * sizeof(float) / kSharedCacheBytesPerMs;
    }
    return std::max(arithmetic_ms, memory_ms);
}

std::vector<CpuPath> cpu_paths_by_cost(const CpuJobShape& shape) {
    std::vector<CpuPath> paths;
    for (const CpuPath path : kAllPaths) {
        if (estimated_ns_per_output(path, shape) < std::numeric_limits<double>::infinity()) {
            paths.push_back(path);
        }
    }
    // Stable: on equal estimates the simpler path (listed first) goes first.
    std::stable_sort(paths.begin(), paths.end(), [&](CpuPath a, CpuPath b) {
        return estimated_ns_per_output(a, shape) < estimated_ns_per_output(b, shape);
    });
    return paths;
}

}  // namespace cudaconv
