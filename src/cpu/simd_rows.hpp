#pragma once
// The cpu variant's inner loops over a row, in vector code from Highway
// (libhwy) for every x86 target it knows (SSE2 to AVX-512) and picked at
// run time for the CPU at hand (simd_rows.cpp), through Highway's headers
// alone (the binary does not load libhwy.so).
#include <cstddef>
#include <cstdint>

namespace cudaconv {

// dst[k] = src[k] as float, for k < n.
void widen_row(const std::uint8_t* src, std::int64_t n, float* dst);
void widen_row(const std::uint16_t* src, std::int64_t n, float* dst);

// The lanes of the widest vector the CPU runs: sums' n below is a
// multiple of kRowChunk floats, which every target's vectors divide.
constexpr std::int64_t kRowChunk = 128;

// sums[k] = sum over t < taps of weights[t] * sources[t][k], for k < n
// (n a multiple of kRowChunk), each sum in float32 in the order of t: the
// direct path's taps. Sources may overlap one another, never sums.
void correlate_taps(const float* const* sources, const float* weights, std::size_t taps,
                    std::int64_t n, float* sums);

// out[k] = sums[k] (|sums[k]| where take_abs) rounded half to even and
// saturated, NaN to 0: finish_row's result for scale 1 and delta 0.
void finish_unscaled(const float* sums, std::int64_t n, bool take_abs, std::uint8_t* out);
void finish_unscaled(const float* sums, std::int64_t n, bool take_abs, std::uint16_t* out);

// z[k] *= f[k] over n complex numbers, each (real, imaginary) doubles
// interleaved: the FFT path's product of spectra.
void multiply_spectra(double* z, const double* f, std::int64_t n);

// A pass of the two-pass path, as pointers to where each tap reads.
struct PassTaps {
    // Pairs of taps of one weight (a symmetric factor's, folded):
    // weight * (first[k] + second[k]).
    const float* const* pair_first = nullptr;
    const float* const* pair_second = nullptr;
    const float* pair_weights = nullptr;
    std::size_t pairs = 0;
    const float* const* single_sources = nullptr;
    const float* single_weights = nullptr;
    std::size_t singles = 0;
};

// sums[k] = the pass's pairs, then its single taps, summed in float32 in
// that order, for k < n (a multiple of kRowChunk). Sources may overlap
// one another, never sums.
void correlate_pass(const PassTaps& pass, std::int64_t n, float* sums);

// A convolution layer's output pixels (cpu/conv_layer_cpu.cpp), a block of
// kLayerPixels at once: out[p * cout_pad + co] = bias[co] plus, over taps t
// and input channels ci in that order, sources[t * kLayerPixels + p][ci] *
// weights[(t * cin + ci) * cout_pad + co], each sum in float32 with fused
// multiply-adds. cout_pad is a multiple of kLayerChunk. Each block of
// output channels is held in registers across every tap: a weight vector
// loaded once serves the block's pixels.
constexpr int kLayerPixels = 6;
constexpr std::int64_t kLayerChunk = 32;
void layer_pixels(const float* const* sources, std::size_t taps, std::int64_t cin,
                  const float* weights, const float* bias, std::int64_t cout_pad, float* out);

// The Highway targets (HWY_AVX3 | HWY_AVX2 | ...) this CPU runs, as the
// functions above tell them: the best of these that Highway compiled is
// the one they use.
std::int64_t simd_targets();

}  // namespace cudaconv
