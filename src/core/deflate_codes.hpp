#pragma once
// The Huffman side of a deflate block (RFC 1951; section numbers where a
// rule comes from), in one definition for the CPU writer (run_deflate.cpp)
// and the GPU's (kernels/codecs/png_deflate.cu): run lengths as symbols, optimal
// length-limited code lengths, canonical codes, and a dynamic block's
// header. Fixed arrays and no library calls, so that a GPU thread runs it
// as it is; the one step that differs is sorting the symbols by frequency
// (std::stable_sort here, a parallel rank on the GPU), which the caller
// does.
#include <cstdint>

#include "core/hd.hpp"

namespace cudaconv::deflate {

constexpr int kMaxCodeBits = 15;       // literal/length and distance codes (3.2.7)
constexpr int kMaxCodeLengthBits = 7;  // the code that codes the code lengths
constexpr int kLitLenSymbols = 286;    // 0-255 bytes, 256 end of block, 257-285 lengths
constexpr int kEndOfBlock = 256;
constexpr int kCodeLengthSymbols = 19;
constexpr int kMinRun = 3;
constexpr int kMaxRun = 258;
constexpr std::uint32_t kMaxStoredBytes = 65535;  // a stored block's LEN (3.2.4)

// A run's length as a symbol and extra bits (3.2.5): 3-10 have symbols
// 257-264 of their own, 258 has 285, and between them each symbol covers
// 2^extra lengths, four symbols to each extra bit count.
struct LengthCode {
    std::uint16_t symbol = 0;
    std::uint8_t extra_bits = 0;
    std::uint16_t extra = 0;
};

CC_HD int highest_bit(std::uint32_t x) {  // x > 0
#if defined(__CUDA_ARCH__)
    return 31 - __clz(x);
#else
    return 31 - __builtin_clz(x);
#endif
}

CC_HD LengthCode length_code(int run) {
    if (run == kMaxRun) return {285, 0, 0};
    const auto x = static_cast<std::uint32_t>(run - kMinRun);
    if (x < 8) return {static_cast<std::uint16_t>(257 + x), 0, 0};
    const int top = highest_bit(x);
    const int extra_bits = top - 2;
    return {static_cast<std::uint16_t>(257 + 4 * (top - 1) + ((x >> extra_bits) & 3)),
            static_cast<std::uint8_t>(extra_bits),
            static_cast<std::uint16_t>(x & ((1u << extra_bits) - 1))};
}

// Gives two symbols of freq[0, n) a nonzero count at least (the first
// unused ones), so that every code is a complete prefix code.
CC_HD void use_two_symbols(std::uint32_t* freq, int n) {
    int used = 0;
    for (int s = 0; s < n; ++s) used += freq[s] > 0;
    for (int s = 0; used < 2 && s < n; ++s) {
        if (freq[s] == 0) {
            freq[s] = 1;
            ++used;
        }
    }
}

// What huffman_lengths works in, for up to kLitLenSymbols leaves: on the
// GPU this sits in shared memory.
struct HuffmanScratch {
    std::uint32_t weight[2 * kLitLenSymbols];
    std::int16_t parent[2 * kLitLenSymbols];
    std::uint8_t depth[2 * kLitLenSymbols];
    std::uint16_t count[kMaxCodeBits + 2];
};

// Code lengths of an optimal prefix code, no longer than limit, into
// lengths[0, n) (symbols of frequency 0 get 0). by_frequency: the `leaves`
// symbols with nonzero frequency, least frequent first, ties in symbol
// order (a stable sort). Deflate's codes need leaves >= 2 (use_two_symbols);
// one leaf gets a 1-bit code, none none.
CC_HD void huffman_lengths(const std::uint32_t* freq, int n, const std::uint16_t* by_frequency,
                           int leaves, int limit, std::uint8_t* lengths, HuffmanScratch& s) {
    for (int i = 0; i < n; ++i) lengths[i] = 0;
    if (leaves < 2) {
        if (leaves == 1) lengths[by_frequency[0]] = 1;
        return;
    }
    // Huffman's tree with two queues: the leaves in order, and the inner
    // nodes, which are made in order of weight (van Leeuwen).
    for (int i = 0; i < leaves; ++i) {
        s.weight[i] = freq[by_frequency[i]];
        s.parent[i] = -1;
    }
    int next_leaf = 0;
    int next_inner = leaves;
    int made = leaves;
    for (int k = 0; k < leaves - 1; ++k) {
        int pick[2];
        for (int& p : pick) {
            if (next_leaf < leaves &&
                (next_inner >= made || s.weight[next_leaf] <= s.weight[next_inner])) {
                p = next_leaf++;
            } else {
                p = next_inner++;
            }
        }
        s.weight[made] = s.weight[pick[0]] + s.weight[pick[1]];
        s.parent[made] = -1;
        s.parent[pick[0]] = s.parent[pick[1]] = static_cast<std::int16_t>(made);
        ++made;
    }
    // Depths from the root (the last node) down: parents come after children.
    s.depth[made - 1] = 0;
    for (int i = made - 2; i >= 0; --i) {
        const int d = s.depth[s.parent[i]] + 1;
        s.depth[i] = static_cast<std::uint8_t>(d < 255 ? d : 255);
    }

    // How many codes of each length; codes past the limit are folded back,
    // keeping Kraft's sum exactly 1 (the way zlib and miniz do it).
    for (int len = 0; len <= limit; ++len) s.count[len] = 0;
    for (int i = 0; i < leaves; ++i) ++s.count[s.depth[i] < limit ? s.depth[i] : limit];
    std::uint64_t kraft = 0;  // in units of 2^-limit
    for (int len = 1; len <= limit; ++len) {
        kraft += static_cast<std::uint64_t>(s.count[len]) << (limit - len);
    }
    while (kraft > (std::uint64_t{1} << limit)) {
        --s.count[limit];
        for (int len = limit - 1; len > 0; --len) {
            if (s.count[len] > 0) {
                --s.count[len];
                s.count[len + 1] += 2;
                break;
            }
        }
        --kraft;
    }
    // The most frequent symbols get the shortest codes.
    int at = leaves - 1;
    for (int len = 1; len <= limit; ++len) {
        for (int k = 0; k < s.count[len]; ++k) {
            lengths[by_frequency[at--]] = static_cast<std::uint8_t>(len);
        }
    }
}

// The symbols of freq[0, n) with a nonzero count, least frequent first,
// ties in symbol order, by insertion: for the 19 code length symbols.
CC_HD int sort_by_frequency(const std::uint32_t* freq, int n, std::uint16_t* out) {
    int leaves = 0;
    for (int s = 0; s < n; ++s) {
        if (freq[s] == 0) continue;
        int at = leaves++;
        while (at > 0 && freq[out[at - 1]] > freq[s]) {
            out[at] = out[at - 1];
            --at;
        }
        out[at] = static_cast<std::uint16_t>(s);
    }
    return leaves;
}

// Canonical codes for lengths[0, n) (3.2.2), bit-reversed: deflate sends a
// code's first bit first, and the bit writers fill from the low end.
CC_HD void canonical_codes(const std::uint8_t* lengths, int n, std::uint16_t* codes) {
    int count[kMaxCodeBits + 1] = {};
    for (int s = 0; s < n; ++s) ++count[lengths[s]];
    count[0] = 0;
    int next[kMaxCodeBits + 1] = {};
    int code = 0;
    for (int bits = 1; bits <= kMaxCodeBits; ++bits) {
        code = (code + count[bits - 1]) << 1;
        next[bits] = code;
    }
    for (int s = 0; s < n; ++s) {
        const int len = lengths[s];
        codes[s] = 0;
        if (len == 0) continue;
        int c = next[len]++;
        int reversed = 0;
        for (int b = 0; b < len; ++b, c >>= 1) reversed = (reversed << 1) | (c & 1);
        codes[s] = static_cast<std::uint16_t>(reversed);
    }
}

// The order in which a header sends the code length code's lengths (a
// function, not an array: device code cannot index a host constant).
CC_HD int code_length_order(int k) {
    constexpr int kOrder[kCodeLengthSymbols] = {16, 17, 18, 0, 8,  7, 9,  6, 10, 5,
                                                11, 4,  12, 3, 13, 2, 14, 1, 15};
    return kOrder[k];
}
CC_HD int code_length_extra_bits(int symbol) {
    return symbol == 16 ? 2 : symbol == 17 ? 3 : symbol == 18 ? 7 : 0;
}

// A dynamic block's codes (3.2.7), for a literal/length alphabet and the
// one distance code of a runs-only stream (distance 1, coded in one bit).
// No member initialisers: the GPU keeps it in shared memory, which cannot
// have them; finish_dynamic_codes sets every field but lit_len.
struct DynamicCodes {
    std::uint8_t lit_len[kLitLenSymbols];
    std::uint16_t lit_code[kLitLenSymbols];
    int lit_count;  // HLIT + 257: the lengths sent
    // The literal/length and distance code lengths, run-length coded with
    // symbols 16 (repeat the last 3-6 times), 17 (3-10 zeros) and 18 (11-138
    // zeros); each with its extra bits' value.
    std::uint8_t cl_symbol[kLitLenSymbols + 1];
    std::uint8_t cl_extra[kLitLenSymbols + 1];
    int cl_symbols;
    std::uint8_t cl_len[kCodeLengthSymbols];
    std::uint16_t cl_code[kCodeLengthSymbols];
    int cl_count;               // HCLEN + 4
    std::uint32_t header_bits;  // BFINAL and BTYPE included
};

// Run-length codes lengths[0, n) into codes.cl_symbol/cl_extra.
CC_HD void code_length_symbols(const std::uint8_t* lengths, int n, DynamicCodes& codes) {
    int out = 0;
    auto put = [&](int symbol, int extra) {
        codes.cl_symbol[out] = static_cast<std::uint8_t>(symbol);
        codes.cl_extra[out] = static_cast<std::uint8_t>(extra);
        ++out;
    };
    int i = 0;
    while (i < n) {
        const std::uint8_t v = lengths[i];
        int run = 1;
        while (i + run < n && lengths[i + run] == v) ++run;
        i += run;
        if (v == 0) {
            while (run >= 11) {
                const int r = run < 138 ? run : 138;
                put(18, r - 11);
                run -= r;
            }
            if (run >= 3) {
                put(17, run - 3);
                run = 0;
            }
        } else {
            put(v, 0);
            --run;
            while (run >= 3) {
                const int r = run < 6 ? run : 6;
                put(16, r - 3);
                run -= r;
            }
        }
        for (; run > 0; --run) put(v, 0);
    }
    codes.cl_symbols = out;
}

// Everything about a dynamic block but its data, from the code lengths of
// its literal/length alphabet (huffman_lengths, limit kMaxCodeBits).
CC_HD void finish_dynamic_codes(DynamicCodes& codes, HuffmanScratch& scratch) {
    canonical_codes(codes.lit_len, kLitLenSymbols, codes.lit_code);
    int lit_count = kLitLenSymbols;
    while (lit_count > 257 && codes.lit_len[lit_count - 1] == 0) --lit_count;
    codes.lit_count = lit_count;
    // The lengths sent: the literal/length codes', then the one distance
    // code's (1 bit; 3.2.7 allows a single distance code).
    std::uint8_t all_lengths[kLitLenSymbols + 1];
    for (int s = 0; s < lit_count; ++s) all_lengths[s] = codes.lit_len[s];
    all_lengths[lit_count] = 1;
    code_length_symbols(all_lengths, lit_count + 1, codes);

    std::uint32_t cl_freq[kCodeLengthSymbols] = {};
    for (int k = 0; k < codes.cl_symbols; ++k) ++cl_freq[codes.cl_symbol[k]];
    use_two_symbols(cl_freq, kCodeLengthSymbols);
    std::uint16_t order[kCodeLengthSymbols];
    const int leaves = sort_by_frequency(cl_freq, kCodeLengthSymbols, order);
    huffman_lengths(cl_freq, kCodeLengthSymbols, order, leaves, kMaxCodeLengthBits, codes.cl_len,
                    scratch);
    canonical_codes(codes.cl_len, kCodeLengthSymbols, codes.cl_code);
    int cl_count = kCodeLengthSymbols;
    while (cl_count > 4 && codes.cl_len[code_length_order(cl_count - 1)] == 0) --cl_count;
    codes.cl_count = cl_count;

    std::uint32_t bits = 3 + 5 + 5 + 4 + 3 * static_cast<std::uint32_t>(cl_count);
    for (int k = 0; k < codes.cl_symbols; ++k) {
        const int symbol = codes.cl_symbol[k];
        bits += codes.cl_len[symbol] + code_length_extra_bits(symbol);
    }
    codes.header_bits = bits;
}

// The bits of a literal/length histogram's data under codes: every symbol's
// code (the end of block's too, at its count in lit_freq), a run's extra
// bits and its distance code (one bit); without the header.
CC_HD std::uint64_t data_bits(const std::uint32_t* lit_freq, const DynamicCodes& codes) {
    std::uint64_t bits = 0;
    for (int s = 0; s <= kEndOfBlock; ++s) {
        bits += static_cast<std::uint64_t>(lit_freq[s]) * codes.lit_len[s];
    }
    for (int s = 257; s < kLitLenSymbols; ++s) {
        const int extra = s < 265 || s == 285 ? 0 : (s - 261) / 4;
        bits += static_cast<std::uint64_t>(lit_freq[s]) * (codes.lit_len[s] + extra + 1);
    }
    return bits;
}

// Writes a dynamic block's header (BFINAL, BTYPE 10, the code lengths);
// Bits has put(value, bit_count).
template <typename Bits>
CC_HD void write_dynamic_header(const DynamicCodes& codes, bool last, Bits& bits) {
    bits.put(last ? 1u : 0u, 1);  // BFINAL
    bits.put(2, 2);               // BTYPE 10: dynamic Huffman codes
    bits.put(static_cast<std::uint32_t>(codes.lit_count - 257), 5);
    bits.put(0, 5);  // HDIST: one distance code
    bits.put(static_cast<std::uint32_t>(codes.cl_count - 4), 4);
    for (int k = 0; k < codes.cl_count; ++k) bits.put(codes.cl_len[code_length_order(k)], 3);
    for (int k = 0; k < codes.cl_symbols; ++k) {
        const int symbol = codes.cl_symbol[k];
        bits.put(codes.cl_code[symbol], codes.cl_len[symbol]);
        const int extra = code_length_extra_bits(symbol);
        if (extra > 0) bits.put(codes.cl_extra[k], extra);
    }
}

// The bits of `size` bytes as stored blocks (3.2.4) starting at a stream
// position `bit_offset`: each chunk of up to 65535 bytes takes 3 header bits,
// the padding to a whole byte, LEN and NLEN.
CC_HD std::uint64_t stored_bits(std::uint64_t bit_offset, std::uint64_t size) {
    std::uint64_t at = bit_offset;
    std::uint64_t left = size;
    do {
        const std::uint64_t n = left < kMaxStoredBytes ? left : kMaxStoredBytes;
        at += 3;
        at = (at + 7) / 8 * 8 + 32 + 8 * n;
        left -= n;
    } while (left > 0);
    return at - bit_offset;
}

}  // namespace cudaconv::deflate
