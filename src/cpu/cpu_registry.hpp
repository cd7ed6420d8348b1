#pragma once
// Factories of the individual variants, called only by registry.cpp.
#include <memory>
#include <vector>

#include "core/backend.hpp"

namespace cudaconv {

std::unique_ptr<Backend> make_cpu_ref_backend();
std::unique_ptr<Backend> make_cpu_backend();  // `cpu`: src/cpu/cpu_parallel.cpp

}  // namespace cudaconv
