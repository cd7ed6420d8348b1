#pragma once
// Factories of the CUDA variants, one per variant's file in kernels/, in the
// order of the tutorial ladder. src/variants/registry.cpp adds them after the
// CPU variants.
#include <memory>
#include <vector>

#include "core/backend.hpp"

namespace cudaconv {

std::unique_ptr<Backend> make_naive_backend();
std::unique_ptr<Backend> make_cmem_backend();
std::unique_ptr<Backend> make_smem_backend();
std::unique_ptr<Backend> make_smem_cached_backend();
std::unique_ptr<Backend> make_unrolled_backend();
std::unique_ptr<Backend> make_separable_backend();
std::unique_ptr<Backend> make_fft_backend();
std::unique_ptr<Backend> make_cudnn_backend();
std::unique_ptr<Backend> make_fast_backend();
std::unique_ptr<Backend> make_fast_separable_backend();
// The composites' named paths ("fast.strips", ...), listed after each.
std::vector<std::unique_ptr<Backend>> make_fast_paths();
std::vector<std::unique_ptr<Backend>> make_fast_separable_paths();

}  // namespace cudaconv
