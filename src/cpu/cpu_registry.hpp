#pragma once
// Factories of the CPU variants, called only by src/variants/registry.cpp
// (kernels/runtime/cuda_registry.hpp declares the CUDA ones).
#include <memory>
#include <vector>

#include "core/backend.hpp"

namespace cudaconv {

std::unique_ptr<Backend> make_cpu_ref_backend();
std::unique_ptr<Backend> make_cpu_backend();  // `cpu`: src/cpu/cpu_parallel.cpp
// Its named paths ("cpu.direct", ...; src/cpu/cpu_paths.hpp), listed after it.
std::vector<std::unique_ptr<Backend>> make_cpu_paths();

}  // namespace cudaconv
