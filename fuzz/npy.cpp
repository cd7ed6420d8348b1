// Fuzz target: parse_npy (io/npy.hpp) on any bytes as read from a file,
// with the dimensions an image takes (2 or 3) and with those a layer's
// files take (1 for a bias to 4 for weights): an array whose shape its data
// fills exactly, which the writer writes back as a file the reader takes to
// the same array; or an std::invalid_argument of one line; nothing else.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "checks.hpp"
#include "io/npy.hpp"

namespace {

void parse_as(const std::uint8_t* data, std::size_t size, const cudaconv::NpyRank& rank) {
    cudaconv::NpyArray array;
    try {
        array = cudaconv::parse_npy(data, size, rank);
    } catch (const std::invalid_argument& e) {
        cudaconv::fuzz::check_message(e.what());
        return;
    }
    const auto dims = static_cast<int>(array.shape.size());
    FUZZ_CHECK(dims >= rank.min && dims <= rank.max, "%d dimensions", dims);
    std::size_t samples = 1;
    for (std::int64_t s : array.shape) samples *= static_cast<std::size_t>(s);
    FUZZ_CHECK(samples == array.data.size(), "%zu samples for a shape of %zu", array.data.size(),
               samples);
    const std::vector<std::uint8_t> again = cudaconv::encode_npy(array.shape, array.data.data());
    const cudaconv::NpyArray back = cudaconv::parse_npy(again.data(), again.size(), rank);
    FUZZ_CHECK(back.shape == array.shape, "the written shape reads back otherwise");
    FUZZ_CHECK(std::memcmp(back.data.data(), array.data.data(), samples * sizeof(float)) == 0,
               "the written data reads back otherwise");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    parse_as(data, size, cudaconv::kNpyImageRank);
    parse_as(data, size, {1, 4, "a layer's file is 1-D to 4-D"});
    return 0;
}
