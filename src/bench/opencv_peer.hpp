#pragma once
// OpenCV as a peer row of `cudaconv bench` (--peer opencv): what a user of
// the CPU would run instead, cv::filter2D, or cv::sepFilter2D for a rank-1
// filter, on OpenCV's thread pool (the threads the cpu variant uses too).
// Timed and verified as the variants are, and marked a peer in the report.
// Not a variant: the main command never runs it.
#include <memory>

#include "core/backend.hpp"

namespace cudaconv {

constexpr const char* kOpenCvPeer = "opencv";

std::unique_ptr<Backend> make_opencv_peer();

}  // namespace cudaconv
