// How many copies of a CUDA variant's input and output the timed launches
// rotate over (kernels/runtime/cuda_backend.cu): host arithmetic, no GPU needed, but
// it lives with the CUDA variants, so a build without CUDA leaves it out.
#include <catch2/catch.hpp>

#include <cstddef>

#include "kernels/runtime/cuda_backend.hpp"

namespace cudaconv {

TEST_CASE("rotation copies span the bytes asked for, within the caps", "[bench]") {
    CHECK(rotation_copies(0, 1000, 1 << 30) == 1);  // off: the old behaviour
    CHECK(rotation_copies(100, 1000, 1 << 30) == 1);
    CHECK(rotation_copies(1000, 1000, 1 << 30) == 1);
    CHECK(rotation_copies(1001, 1000, 1 << 30) == 2);
    CHECK(rotation_copies(100'000'000, 72'000'000, 1 << 30) == 2);  // 4000x3000 RGB u8, H100
    CHECK(rotation_copies(std::size_t{1} << 40, 1000, std::size_t{1} << 40) == kMaxRotationCopies);
    CHECK(rotation_copies(10'000, 1000, 3500) == 4);  // 3 extra copies fit
    CHECK(rotation_copies(10'000, 1000, 0) == 1);
}

}  // namespace cudaconv
