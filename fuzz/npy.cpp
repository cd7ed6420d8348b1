// Fuzz target: parse_npy (io/npy.hpp) on any bytes as read from a file: an
// array whose shape (2 or 3 sizes) its data fills exactly, which the writer
// writes back as a file the reader takes to the same array; or an
// std::invalid_argument of one line; nothing else.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "checks.hpp"
#include "io/npy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    cudaconv::NpyArray array;
    try {
        array = cudaconv::parse_npy(data, size);
    } catch (const std::invalid_argument& e) {
        cudaconv::fuzz::check_message(e.what());
        return 0;
    }
    FUZZ_CHECK(array.shape.size() == 2 || array.shape.size() == 3, "%zu dimensions",
               array.shape.size());
    std::size_t samples = 1;
    for (std::int64_t s : array.shape) samples *= static_cast<std::size_t>(s);
    FUZZ_CHECK(samples == array.data.size(), "%zu samples for a shape of %zu", array.data.size(),
               samples);
    const std::vector<std::uint8_t> again = cudaconv::encode_npy(array.shape, array.data.data());
    const cudaconv::NpyArray back = cudaconv::parse_npy(again.data(), again.size());
    FUZZ_CHECK(back.shape == array.shape, "the written shape reads back otherwise");
    FUZZ_CHECK(std::memcmp(back.data.data(), array.data.data(), samples * sizeof(float)) == 0,
               "the written data reads back otherwise");
    return 0;
}
