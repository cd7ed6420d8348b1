// run_deflate_zlib's streams, inflated by libdeflate's decompressor, give
// back every input: empty, one byte, runs of every length around the code
// boundaries, runs across blocks, all-equal, random (stored blocks), and
// image rows; and they are as small as expected where runs dominate.
#include <catch2/catch.hpp>

#include <libdeflate.h>

#include <cstdint>
#include <random>
#include <vector>

#include "io/run_deflate.hpp"

namespace cudaconv::test {
namespace {

std::vector<std::uint8_t> inflate(const std::vector<std::uint8_t>& stream, std::size_t size) {
    libdeflate_decompressor* d = libdeflate_alloc_decompressor();
    std::vector<std::uint8_t> out(size + 1);  // one spare: a longer output fails
    std::size_t got = 0;
    const libdeflate_result r =
        libdeflate_zlib_decompress(d, stream.data(), stream.size(), out.data(), out.size(), &got);
    libdeflate_free_decompressor(d);
    REQUIRE(r == LIBDEFLATE_SUCCESS);
    out.resize(got);
    return out;
}

std::vector<std::uint8_t> deflate(const std::vector<std::uint8_t>& data, int threads = 1) {
    // A guard byte past the bound: the stream never writes there.
    const std::size_t bound = run_deflate_bound(data.size());
    std::vector<std::uint8_t> stream(bound + 1, 0xAB);
    const std::size_t n = run_deflate_zlib(data.data(), data.size(), stream.data(), threads);
    REQUIRE(n <= bound);
    CHECK(stream[bound] == 0xAB);
    stream.resize(n);
    return stream;
}

void round_trip(const std::vector<std::uint8_t>& data) {
    CHECK(inflate(deflate(data), data.size()) == data);
}

}  // namespace

TEST_CASE("run_deflate: empty and tiny inputs round-trip") {
    round_trip({});
    round_trip({7});
    round_trip({7, 7});
    round_trip({7, 7, 7});
    round_trip({0, 0, 0, 0, 0});
}

TEST_CASE("run_deflate: runs of every length from 1 to 600 round-trip") {
    std::vector<std::uint8_t> data;
    std::mt19937 gen(5);
    for (int len = 1; len <= 600; ++len) {
        const auto value = static_cast<std::uint8_t>(gen());
        data.insert(data.end(), static_cast<std::size_t>(len), value);
        data.push_back(static_cast<std::uint8_t>(value + 1));  // ends the run
    }
    round_trip(data);
}

// Bytes from a small alphabet: pairs, triples and runs everywhere, at
// every offset from the 8-byte reads, over every size up to 300 and across
// a block boundary.
TEST_CASE("run_deflate: small alphabets at every size round-trip") {
    std::mt19937 gen(11);
    for (std::size_t size = 0; size <= 300; ++size) {
        std::vector<std::uint8_t> data(size);
        for (auto& b : data) b = static_cast<std::uint8_t>(gen() % 3);
        round_trip(data);
    }
    std::vector<std::uint8_t> data((256u << 10) + 777);
    for (auto& b : data) b = static_cast<std::uint8_t>(gen() % 2);
    round_trip(data);
}

TEST_CASE("run_deflate: one value throughout, over several blocks, is tiny") {
    const std::vector<std::uint8_t> data(3u << 20, 42);
    const std::vector<std::uint8_t> stream = deflate(data);
    CHECK(stream.size() < 20000);
    CHECK(inflate(stream, data.size()) == data);
}

TEST_CASE("run_deflate: random bytes fall back to stored blocks") {
    std::vector<std::uint8_t> data(700000);
    std::mt19937 gen(9);
    for (auto& b : data) b = static_cast<std::uint8_t>(gen());
    const std::vector<std::uint8_t> stream = deflate(data);
    CHECK(stream.size() <= data.size() + data.size() / 65535 * 5 + 64);
    CHECK(inflate(stream, data.size()) == data);
}

TEST_CASE("run_deflate: skewed bytes and runs mixed, every symbol in use") {
    // A geometric spread of values (long codes, past 15 bits before
    // limiting) with runs between, over several blocks.
    std::vector<std::uint8_t> data;
    std::mt19937 gen(3);
    std::geometric_distribution<int> skew(0.35);
    std::uniform_int_distribution<int> run(1, 300);
    while (data.size() < (1u << 20)) {
        data.push_back(static_cast<std::uint8_t>(std::min(skew(gen), 255)));
        if (gen() % 7 == 0) data.insert(data.end(), static_cast<std::size_t>(run(gen)), data.back());
    }
    for (int v = 0; v < 256; ++v) data.push_back(static_cast<std::uint8_t>(v));
    round_trip(data);
    const std::vector<std::uint8_t> stream = deflate(data);
    CHECK(stream.size() < data.size() / 2);
}

// Several threads compress parts of whole blocks, each part ended by an
// empty stored block: the stream inflates to the same bytes, for parts
// that meet anywhere in the data (runs across them included) and for
// stored, run and mixed blocks.
TEST_CASE("run_deflate: several threads give a stream of the same bytes") {
    std::mt19937 gen(17);
    for (const std::size_t size : {std::size_t{2} << 18, (std::size_t{5} << 18) + 1234,
                                   (std::size_t{9} << 18) + 7}) {
        std::vector<std::uint8_t> data(size);
        for (std::size_t i = 0; i < size; ++i) {
            // Stretches of random bytes, runs (one over each block edge) and
            // a small alphabet, in turn.
            const std::size_t stretch = (i / 100000) % 3;
            data[i] = stretch == 0 ? static_cast<std::uint8_t>(gen())
                      : stretch == 1 ? std::uint8_t{9}
                                     : static_cast<std::uint8_t>(gen() % 4);
        }
        for (std::size_t b = 1; b * (std::size_t{1} << 18) + 300 <= size; ++b) {
            std::fill_n(data.begin() + static_cast<std::ptrdiff_t>(b * (1u << 18) - 300), 600, 5);
        }
        const std::vector<std::uint8_t> one = deflate(data, 1);
        for (const int threads : {2, 3, 8, 64}) {
            INFO("size " << size << ", threads " << threads);
            const std::vector<std::uint8_t> several = deflate(data, threads);
            CHECK(inflate(several, size) == data);
            CHECK(several.size() <= one.size() + 16 * static_cast<std::size_t>(threads));
        }
    }
}

}  // namespace cudaconv::test
