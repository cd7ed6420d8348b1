// run_deflate_zlib's streams, inflated by libdeflate's decompressor, give
// back every input: empty, one byte, runs of every length around the code
// boundaries, runs across blocks, all-equal, random (stored blocks), and
// image rows; and they are as small as expected where runs dominate. The
// bytes are the same on any number of threads.
#include <catch2/catch.hpp>

#include <libdeflate.h>

#include <algorithm>
#include <cstddef>
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

// Where two buffers first differ, or the shorter one's size: a failure
// names a place instead of printing megabytes.
std::size_t first_difference(const std::vector<std::uint8_t>& a,
                             const std::vector<std::uint8_t>& b) {
    const std::size_t n = std::min(a.size(), b.size());
    return static_cast<std::size_t>(
        std::mismatch(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(n), b.begin()).first -
        a.begin());
}

// Stretches of random bytes, runs and a small alphabet, in turn, with a run
// over each block edge: stored, run and mixed blocks, and parts of the
// stream that meet anywhere (runs across them included).
std::vector<std::uint8_t> mixed_data(std::size_t size, unsigned seed) {
    std::mt19937 gen(seed);
    std::vector<std::uint8_t> data(size);
    for (std::size_t i = 0; i < size; ++i) {
        const std::size_t stretch = (i / 100000) % 3;
        data[i] = stretch == 0   ? static_cast<std::uint8_t>(gen())
                  : stretch == 1 ? std::uint8_t{9}
                                 : static_cast<std::uint8_t>(gen() % 4);
    }
    for (std::size_t b = 1; b * (std::size_t{1} << 18) + 300 <= size; ++b) {
        std::fill_n(data.begin() + static_cast<std::ptrdiff_t>(b * (1u << 18) - 300), 600, 5);
    }
    return data;
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
        if (gen() % 7 == 0)
            data.insert(data.end(), static_cast<std::size_t>(run(gen)), data.back());
    }
    for (int v = 0; v < 256; ++v) data.push_back(static_cast<std::uint8_t>(v));
    round_trip(data);
    const std::vector<std::uint8_t> stream = deflate(data);
    CHECK(stream.size() < data.size() / 2);
}

// Several threads compress parts of whole blocks, each part ended by an
// empty stored block: the stream inflates to the same bytes.
TEST_CASE("run_deflate: several threads give a stream of the same bytes") {
    for (const std::size_t size :
         {std::size_t{2} << 18, (std::size_t{5} << 18) + 1234, (std::size_t{9} << 18) + 7}) {
        const std::vector<std::uint8_t> data = mixed_data(size, 17);
        for (const int threads : {2, 3, 8, 64}) {
            INFO("size " << size << ", threads " << threads);
            CHECK(inflate(deflate(data, threads), size) == data);
        }
    }
}

// The stream is a function of the input alone: a batch's encodes get
// threads as images happen to finish, and users compare output files, so
// the thread count may change only how many parts run at once. 21 blocks:
// several parts.
TEST_CASE("run_deflate: the stream's bytes do not depend on the thread count") {
    const std::size_t size = (std::size_t{21} << 18) + 99;
    const std::vector<std::uint8_t> data = mixed_data(size, 23);
    const std::vector<std::uint8_t> one = deflate(data, 1);
    const std::vector<std::uint8_t> back = inflate(one, size);
    REQUIRE(back.size() == size);
    REQUIRE(first_difference(back, data) == size);
    for (const int threads : {0, 2, 7, 16}) {
        INFO("threads " << threads);
        const std::vector<std::uint8_t> several = deflate(data, threads);
        REQUIRE(several.size() == one.size());
        REQUIRE(first_difference(several, one) == one.size());
    }
}

}  // namespace cudaconv::test
