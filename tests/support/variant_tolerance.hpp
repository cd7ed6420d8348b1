#pragma once
// The per-variant tolerance table of the GPU tests: docs/SPEC.md's bound for
// every variant but fft, whose float32 transforms get the bound the fft
// variant documents. bench/tolerance.cpp is the product's copy of the same
// rule, which counts the border value only for the constant border; this
// one counts it always (looser). They stay two until a GPU run shows every
// variant (cudnn's algorithms among them) within the tighter one.
#include <opencv2/core.hpp>

#include "core/backend.hpp"
#include "support/compare.hpp"

namespace cudaconv::test {

Tolerance tolerance_for(const Backend& variant, const Job& job, const cv::Mat& src);

}  // namespace cudaconv::test
