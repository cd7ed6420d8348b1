#pragma once
// Gaussian taps that equal OpenCV's, bit for bit: cv::getGaussianKernel(n,
// sigma, CV_64F) for one axis, and their outer product for the 2D filter.
// Written out here (no OpenCV call) so filters/ stays plain C++; the unit
// tests compare against OpenCV itself.
#include <vector>

#include "filters/filter.hpp"

namespace cudaconv {

// OpenCV's sigma for an n-tap kernel when none is given:
// 0.3((n-1)/2 - 1) + 0.8.
double gaussian_sigma_for_size(int n);

// OpenCV's (GaussianBlur on 8-bit images) size for a sigma, as docs/SPEC.md
// fixes it: round(6 sigma + 1) | 1, rounding half to even like cvRound.
// Returns a double so a huge sigma can be range-checked before any cast.
double gaussian_size_for_sigma(double sigma);

// The n taps of cv::getGaussianKernel(n, sigma, CV_64F). sigma <= 0 means
// "from the size", including OpenCV's fixed tables for n = 1, 3, 5, 7, 9.
// n must be >= 1 (odd in practice; callers check).
std::vector<double> gaussian_kernel_1d(int n, double sigma);

// The n x n filter: column taps times row taps.
Filter gaussian_filter(int n, double sigma);

}  // namespace cudaconv
