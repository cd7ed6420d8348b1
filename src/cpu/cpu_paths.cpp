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
            if (shape.two_pass_loads <= 0) return kCannot;
            return kTwoPassFixedNs + kTwoPassPerLoadNs * static_cast<double>(shape.two_pass_loads);
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
