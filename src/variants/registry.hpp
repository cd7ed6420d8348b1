#pragma once
// The single list of variants. `-k` choices, `list kernels`, `bench -k all`
// and the tests all come from here, never from a second list.
#include <memory>
#include <string_view>
#include <vector>

#include "core/backend.hpp"

namespace cudaconv {

// Every variant, CPU ones first, in the order of the tutorial ladder; a
// composite's named paths (Backend::parent) right after it.
const std::vector<std::unique_ptr<Backend>>& all_backends();

// nullptr when there is no such variant.
Backend* find_backend(std::string_view name);

}  // namespace cudaconv
