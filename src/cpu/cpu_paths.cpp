#include "cpu/cpu_paths.hpp"

#include <algorithm>
#include <limits>

namespace cudaconv {
namespace {

// Nanoseconds an output sample on one core: a fixed part (widening the
// input, finishing and storing; a tile's gathering) and a part per
// multiply-add, or per unit of the transforms' work (FftTiles). Fitted to
// `cudaconv bench -k cpu.direct,cpu.two-pass,cpu.fft --no-verify` on the
// 2-core development machine (AVX2), 4000x3000 gray f32 and RGB u8:
//   direct:   3x3 1.4-1.7 ns, 7x7 3.5-4.1, 15x15 11.2-11.3, 31x31 44.2;
//   two-pass: 3x3 1.4-1.7, gaussian:5 1.6, 7x7 1.8, 19x19 3.6, 61x61 9.4;
//   fft:      7.9-10.3 for every size from 3x3 to 31x31 (tiles of 32 to
//             256 a side), 10 for 61x61.
// So dense filters go to the FFT from about 13x13 (u8) or 15x15 (f32),
// rank-1 ones to two passes from 5x5, and 3x3 filters stay direct.
constexpr double kDirectFixedNs = 1.2;
constexpr double kDirectPerTapNs = 0.044;
constexpr double kTwoPassFixedNs = 1.1;
constexpr double kTwoPassPerTapNs = 0.14;
constexpr double kFftFixedNs = 2.0;
constexpr double kFftPerWorkNs = 0.4;

constexpr CpuPath kAllPaths[] = {CpuPath::direct, CpuPath::two_pass, CpuPath::fft};

}  // namespace

std::string_view cpu_path_name(CpuPath path) {
    switch (path) {
        case CpuPath::direct: return "cpu.direct";
        case CpuPath::two_pass: return "cpu.two-pass";
        case CpuPath::fft: return "cpu.fft";
    }
    return "cpu.direct";
}

double estimated_ns_per_output(CpuPath path, const CpuJobShape& shape) {
    constexpr double kCannot = std::numeric_limits<double>::infinity();
    switch (path) {
        case CpuPath::direct:
            return kDirectFixedNs + kDirectPerTapNs * static_cast<double>(shape.nonzero_taps);
        case CpuPath::two_pass:
            if (shape.two_pass_taps <= 0) return kCannot;
            return kTwoPassFixedNs + kTwoPassPerTapNs * static_cast<double>(shape.two_pass_taps);
        case CpuPath::fft:
            if (shape.fft_work_per_output <= 0.0) return kCannot;
            return kFftFixedNs + kFftPerWorkNs * shape.fft_work_per_output;
    }
    return kCannot;
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
