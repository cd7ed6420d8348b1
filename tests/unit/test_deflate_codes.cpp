// The Huffman side of a deflate block (core/deflate_codes.hpp), which the CPU
// writer and the GPU's share: run lengths against RFC 1951's table, code
// lengths that are optimal and within the limit, canonical codes that are
// a prefix code, and a stored block's size wherever it starts.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "core/deflate_codes.hpp"

namespace cudaconv::test {
namespace {

using namespace deflate;

// Huffman code lengths without a limit, by the textbook's heap: what the
// limited ones must equal where the limit does not bind.
std::uint64_t optimal_cost(const std::vector<std::uint32_t>& freq) {
    std::vector<std::uint64_t> heap;
    for (std::uint32_t f : freq) {
        if (f > 0) heap.push_back(f);
    }
    std::uint64_t cost = 0;
    std::make_heap(heap.begin(), heap.end(), std::greater<>());
    while (heap.size() > 1) {
        std::pop_heap(heap.begin(), heap.end(), std::greater<>());
        const std::uint64_t a = heap.back();
        heap.pop_back();
        std::pop_heap(heap.begin(), heap.end(), std::greater<>());
        const std::uint64_t b = heap.back();
        heap.pop_back();
        cost += a + b;
        heap.push_back(a + b);
        std::push_heap(heap.begin(), heap.end(), std::greater<>());
    }
    return cost;
}

std::vector<std::uint8_t> lengths_for(std::vector<std::uint32_t> freq, int limit) {
    const int n = static_cast<int>(freq.size());
    use_two_symbols(freq.data(), n);
    std::vector<std::uint16_t> order(freq.size());
    int leaves = 0;
    for (int s = 0; s < n; ++s) {
        if (freq[s] > 0) order[leaves++] = static_cast<std::uint16_t>(s);
    }
    std::stable_sort(order.begin(), order.begin() + leaves,
                     [&](std::uint16_t a, std::uint16_t b) { return freq[a] < freq[b]; });
    HuffmanScratch scratch;
    std::vector<std::uint8_t> lengths(freq.size());
    huffman_lengths(freq.data(), n, order.data(), leaves, limit, lengths.data(), scratch);
    return lengths;
}

}  // namespace

TEST_CASE("deflate codes: every run length has RFC 1951's symbol and extra bits") {
    constexpr int kBase[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                               31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
    constexpr int kExtra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
    for (int run = kMinRun; run <= kMaxRun; ++run) {
        int code = 28;
        if (run < 258) {
            code = 0;
            while (code < 27 && kBase[code + 1] <= run) ++code;
        }
        INFO("run " << run);
        const LengthCode lc = length_code(run);
        CHECK(lc.symbol == 257 + code);
        CHECK(lc.extra_bits == kExtra[code]);
        CHECK(lc.extra == run - kBase[code]);
    }
}

TEST_CASE("deflate codes: lengths are optimal, within the limit, and a complete prefix code") {
    std::mt19937 gen(3);
    for (int trial = 0; trial < 200; ++trial) {
        const int n = trial % 2 ? kLitLenSymbols : kCodeLengthSymbols;
        const int limit = n == kLitLenSymbols ? kMaxCodeBits : kMaxCodeLengthBits;
        std::vector<std::uint32_t> freq(static_cast<std::size_t>(n));
        const int used = 1 + static_cast<int>(gen() % static_cast<unsigned>(n));
        for (int k = 0; k < used; ++k) {
            // Skewed: powers of two up to 2^20 make the limit bind at times.
            freq[gen() % n] += 1u << (gen() % (trial % 3 == 0 ? 21 : 6));
        }
        const std::vector<std::uint8_t> lengths = lengths_for(freq, limit);
        std::vector<std::uint32_t> used_freq = freq;
        use_two_symbols(used_freq.data(), n);
        double kraft = 0.0;
        std::uint64_t cost = 0;
        int longest = 0;
        for (int s = 0; s < n; ++s) {
            INFO("trial " << trial << " symbol " << s);
            REQUIRE((used_freq[s] > 0) == (lengths[s] > 0));
            if (lengths[s] == 0) continue;
            kraft += 1.0 / static_cast<double>(1u << lengths[s]);
            cost += static_cast<std::uint64_t>(used_freq[s]) * lengths[s];
            longest = std::max<int>(longest, lengths[s]);
        }
        INFO("trial " << trial);
        CHECK(kraft == 1.0);
        CHECK(longest <= limit);
        if (longest < limit) CHECK(cost == optimal_cost(used_freq));  // the limit did not bind
        // Canonical codes: no code is a prefix of another.
        std::vector<std::uint16_t> codes(static_cast<std::size_t>(n));
        canonical_codes(lengths.data(), n, codes.data());
        for (int a = 0; a < n; ++a) {
            for (int b = 0; b < n; ++b) {
                if (a == b || lengths[a] == 0 || lengths[b] == 0 || lengths[a] > lengths[b])
                    continue;
                const unsigned mask =
                    (1u << lengths[a]) - 1;  // codes are bit-reversed: low bits first
                CHECK((codes[b] & mask) != codes[a]);
            }
        }
    }
}

TEST_CASE("deflate codes: a stored block's size depends on where it starts") {
    // 3 header bits, padding to a byte, LEN and NLEN, the bytes; a chunk of
    // at most 65535 bytes each.
    CHECK(stored_bits(0, 0) == 8 + 32);
    CHECK(stored_bits(5, 0) == 3 + 32);  // 5 + 3 bits end on the byte
    CHECK(stored_bits(6, 10) == 2 + 8 + 32 + 80);
    CHECK(stored_bits(0, 65535) == 8 + 32 + 8 * 65535);
    CHECK(stored_bits(0, 65536) == 2 * (8 + 32) + 8 * 65536);
    CHECK(stored_bits(7, 150000) == 1 + 8 + 3 * 40 + 8 * 150000 - 8);
}

}  // namespace cudaconv::test
