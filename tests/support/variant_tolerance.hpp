#pragma once
// The per-variant tolerance table of the GPU tests: SPEC.md's bound for
// every variant but fft, whose float32 transforms get the bound the fft
// variant documents.
#include <opencv2/core.hpp>

#include "core/backend.hpp"
#include "support/compare.hpp"

namespace cudaconv::test {

Tolerance tolerance_for(const Backend& variant, const Job& job, const cv::Mat& src);

}  // namespace cudaconv::test
