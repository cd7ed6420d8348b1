#include "io/run_deflate.hpp"

#include <libdeflate.h>
#include <opencv2/core/utility.hpp>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "core/deflate_codes.hpp"

// RFC 1951 section numbers are given where a rule comes from.
namespace cudaconv {
namespace {

using namespace deflate;

// Bytes of input a block: its own Huffman codes follow the data's changes
// down an image, for a header of about 100 bytes.
constexpr std::size_t kBlockBytes = std::size_t{256} << 10;

// Deflate's bits, first bit lowest. After each put the whole bytes go out
// with one 8-byte store, without a branch (the output needs 8 bytes of
// room past its end).
class BitWriter {
public:
    explicit BitWriter(std::uint8_t* out) : out_(out) {}

    // At most 56 bits at a time.
    void put(std::uint64_t value, int bits) {
        buffer_ |= value << count_;
        count_ += bits;
        store(buffer_);
        const int whole = count_ >> 3;  // at most 7: under 8 + 56 bits
        out_ += whole;
        buffer_ >>= 8 * whole;
        count_ &= 7;
    }

    // Pads to a whole byte, then appends bytes as they are.
    void align_and_copy(const std::uint8_t* data, std::size_t size) {
        align();
        std::copy(data, data + size, out_);
        out_ += size;
    }

    void align() {
        if (count_ > 0) {
            *out_++ = static_cast<std::uint8_t>(buffer_);
            buffer_ = 0;
            count_ = 0;
        }
    }

    std::uint8_t* position() const { return out_; }

private:
    void store(std::uint64_t v) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        std::memcpy(out_, &v, 8);
#else
        for (int i = 0; i < 8; ++i) out_[i] = static_cast<std::uint8_t>(v >> (8 * i));
#endif
    }

    std::uint8_t* out_;
    std::uint64_t buffer_ = 0;
    int count_ = 0;  // bits in buffer_, under 8 between puts
};

constexpr std::uint64_t kLowBytes = 0x0101010101010101ull;

// Eight bytes with byte k at bits 8k to 8k + 7, whatever the machine's
// byte order: the tests below read bytes in memory order from the low end.
std::uint64_t load8(const std::uint8_t* p) {
    std::uint64_t v = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    std::memcpy(&v, p, 8);
#else
    for (int k = 0; k < 8; ++k) v |= static_cast<std::uint64_t>(p[k]) << (8 * k);
#endif
    return v;
}

// 0x80 in each byte of v that is zero, 0 in the others: exact, as no carry
// crosses from one byte to the next.
std::uint64_t zero_byte_flags(std::uint64_t v) {
    constexpr std::uint64_t kLow7 = 0x7F7F7F7F7F7F7F7Full;
    return ~(((v & kLow7) + kLow7) | v | kLow7);
}

// The index of the first nonzero byte of a load8 value, 8 if none.
int first_nonzero_byte(std::uint64_t v) { return v == 0 ? 8 : __builtin_ctzll(v) >> 3; }

// A block's tokens: a byte (0-255), or a run of length L as 256 + L; and
// how often each token comes. tokens must have room for end - begin + 8.
// The bytes are read 8 at a time, each against the one before it: a run
// that can be coded starts where three in a row repeat their predecessor
// (edge maps have many pairs, which are literals). Where none of the first
// 6 bytes starts one, all 6 are literals, with no branch on each byte.
std::size_t tokenize(const std::uint8_t* data, std::size_t begin, std::size_t end,
                     std::uint16_t* tokens, std::uint32_t* token_freq) {
    std::size_t n = 0;
    std::size_t i = begin;
    if (i == 0 && i < end) {  // the stream's first byte has none before it
        ++token_freq[data[0]];
        tokens[n++] = data[i++];
    }
    auto literals = [&](std::size_t count) {
        for (std::size_t k = 0; k < count; ++k) {
            const std::uint8_t byte = data[i + k];
            ++token_freq[byte];
            tokens[n + k] = byte;
        }
        n += count;
        i += count;
    };
    auto emit_run_at_i = [&]() {  // data[i] repeats data[i - 1]
        const std::uint8_t previous = data[i - 1];
        const std::size_t limit = std::min<std::size_t>(kMaxRun, end - i);
        std::size_t run = 1;
        const std::uint64_t repeated = previous * kLowBytes;
        while (run + 8 <= limit) {
            const int differs_at = first_nonzero_byte(load8(data + i + run) ^ repeated);
            run += static_cast<std::size_t>(differs_at);
            if (differs_at < 8) break;
        }
        while (run < limit && data[i + run] == previous) ++run;
        if (run >= kMinRun) {
            const auto t = static_cast<std::uint16_t>(256 + run);
            ++token_freq[t];
            tokens[n++] = t;
            i += run;
        } else {
            literals(run);
        }
    };
    while (i + 8 <= end) {
        // Byte k flagged where data[i + k] == data[i + k - 1]; a run of 3
        // starts at k where k, k + 1 and k + 2 are all flagged.
        const std::uint64_t z = zero_byte_flags(load8(data + i) ^ load8(data + i - 1));
        const std::uint64_t starts = z & (z >> 8) & (z >> 16) & 0x0000808080808080ull;
        if (starts == 0) {
            literals(6);
            continue;
        }
        literals(static_cast<std::size_t>(__builtin_ctzll(starts) >> 3));
        emit_run_at_i();
    }
    while (i < end) {
        if (data[i] == data[i - 1]) {
            emit_run_at_i();
        } else {
            literals(1);
        }
    }
    return n;
}

// One block: dynamic Huffman codes, or stored as it is where that is smaller.
constexpr int kTokenValues = 256 + kMaxRun + 1;

void write_block(const std::uint8_t* data, std::size_t begin, std::size_t end, bool last,
                 std::vector<std::uint16_t>& tokens, BitWriter& bits) {
    std::uint32_t token_freq[kTokenValues] = {};
    const std::size_t token_count = tokenize(data, begin, end, tokens.data(), token_freq);
    std::uint32_t lit_freq[kLitLenSymbols] = {};
    std::copy(token_freq, token_freq + 256, lit_freq);
    for (int run = kMinRun; run <= kMaxRun; ++run) {
        lit_freq[length_code(run).symbol] += token_freq[256 + run];
    }
    lit_freq[kEndOfBlock] = 1;
    use_two_symbols(lit_freq, kLitLenSymbols);
    std::array<std::uint16_t, kLitLenSymbols> order{};
    int leaves = 0;
    for (int s = 0; s < kLitLenSymbols; ++s) {
        if (lit_freq[s] > 0)
            order[static_cast<std::size_t>(leaves++)] = static_cast<std::uint16_t>(s);
    }
    std::stable_sort(order.begin(), order.begin() + leaves,
                     [&](std::uint16_t a, std::uint16_t b) { return lit_freq[a] < lit_freq[b]; });
    auto scratch = std::make_unique<HuffmanScratch>();
    auto codes = std::make_unique<DynamicCodes>();
    huffman_lengths(lit_freq, kLitLenSymbols, order.data(), leaves, kMaxCodeBits, codes->lit_len,
                    *scratch);
    finish_dynamic_codes(*codes, *scratch);

    // Its size both ways, in bits. (Stored, counted as if each 64 KB chunk
    // took a whole byte of padding.)
    const std::uint64_t dynamic_bits = codes->header_bits + data_bits(lit_freq, *codes);
    const std::size_t size = end - begin;
    const std::uint64_t stored_bits =
        8 * static_cast<std::uint64_t>(size) + 40 * (size / kMaxStoredBytes + 1) + 8;

    if (stored_bits < dynamic_bits) {
        std::size_t at = begin;
        do {
            const std::size_t n = std::min<std::size_t>(kMaxStoredBytes, end - at);
            const bool final_chunk = last && at + n == end;
            bits.put(final_chunk ? 1 : 0, 3);  // BFINAL, BTYPE 00
            bits.align();
            const std::uint8_t header[4] = {
                static_cast<std::uint8_t>(n), static_cast<std::uint8_t>(n >> 8),
                static_cast<std::uint8_t>(~n), static_cast<std::uint8_t>(~n >> 8)};
            bits.align_and_copy(header, 4);
            bits.align_and_copy(data + at, n);
            at += n;
        } while (at < end);
        return;
    }

    write_dynamic_header(*codes, last, bits);
    // Each token's bits in one table: a byte's code; a run's length code,
    // its extra bits, then distance code 0 (a 0 bit).
    std::uint32_t token_bits[kTokenValues];
    std::uint8_t token_bit_count[kTokenValues];
    for (int t = 0; t < 256; ++t) {
        token_bits[t] = codes->lit_code[t];
        token_bit_count[t] = codes->lit_len[t];
    }
    for (int run = kMinRun; run <= kMaxRun; ++run) {
        const LengthCode lc = length_code(run);
        const int len = codes->lit_len[lc.symbol];
        token_bits[256 + run] = codes->lit_code[lc.symbol] |
                                (static_cast<std::uint32_t>(lc.extra) << len);
        token_bit_count[256 + run] = static_cast<std::uint8_t>(len + lc.extra_bits + 1);
    }
    // On a copy of the writer: a local whose address is not taken stays in
    // registers, where the output's byte stores would otherwise make the
    // compiler reload the caller's writer after every token.
    // Two tokens a put (at most 2 x 21 bits), without a branch.
    BitWriter local = bits;
    std::size_t k = 0;
    for (; k + 2 <= token_count; k += 2) {
        const std::uint16_t a = tokens[k];
        const std::uint16_t b = tokens[k + 1];
        local.put(token_bits[a] | (static_cast<std::uint64_t>(token_bits[b]) << token_bit_count[a]),
                  token_bit_count[a] + token_bit_count[b]);
    }
    if (k < token_count) local.put(token_bits[tokens[k]], token_bit_count[tokens[k]]);
    bits = local;
    bits.put(codes->lit_code[kEndOfBlock], codes->lit_len[kEndOfBlock]);
}

}  // namespace

std::size_t run_deflate_bound(std::size_t size) {
    const std::size_t blocks = std::max<std::size_t>(1, (size + kBlockBytes - 1) / kBlockBytes);
    // A block is never larger than stored (its bytes and 5 a 64 KB chunk,
    // write_block's choice); 300 bytes a block more is generous for the
    // bits left over between blocks and a sync flush after each (5 bytes,
    // and 8 of room for the bit writer's stores, in a thread's own buffer);
    // then the zlib header and checksum, and 8 bytes for those stores.
    return 2 + size + 5 * (size / kMaxStoredBytes + blocks) + 300 * blocks + 4 + 8;
}

namespace {

// The stream is written in parts of whole blocks, each ended by a sync
// flush, which threads may compress at once. How many comes from the
// input's size alone, so that the bytes do not depend on the threads an
// encode is given (a batch's depend on timing): parts of at least 2 blocks
// (a flush is 5 bytes), at most 32: a 4000x3000 RGB image's 36 MB of rows
// (139 blocks) in parts of 4-5 blocks, 2 a thread on 16 cores (as fast
// there as one part a thread was: 15-21 ms, 36 MB of synthetic rows); up
// to 768 KB (3 blocks), one part.
constexpr std::size_t kMinPartBlocks = 2;
constexpr std::size_t kMaxParts = 32;

// Blocks first .. last - 1 of data, the last of them final if `final`,
// otherwise followed by an empty stored block so that the output ends on a
// whole byte; returns the bytes written to out.
std::size_t write_blocks(const std::uint8_t* data, std::size_t size, std::size_t first,
                         std::size_t last, bool final, std::vector<std::uint16_t>& tokens,
                         std::uint8_t* out) {
    BitWriter bits(out);
    for (std::size_t b = first; b < last; ++b) {
        const std::size_t begin = b * kBlockBytes;
        const std::size_t end = std::min(size, begin + kBlockBytes);
        write_block(data, begin, end, final && b + 1 == last, tokens, bits);
    }
    if (!final) {
        bits.put(0, 3);  // BFINAL 0, BTYPE 00: stored, empty
        bits.align();
        const std::uint8_t empty[4] = {0x00, 0x00, 0xFF, 0xFF};  // LEN 0, NLEN
        bits.align_and_copy(empty, 4);
    }
    bits.align();
    return static_cast<std::size_t>(bits.position() - out);
}

// The stream's parts: `count` runs of whole blocks, as even as can be.
struct Parts {
    std::size_t size = 0;    // of the data
    std::size_t blocks = 0;  // of kBlockBytes, the last maybe shorter
    std::size_t count = 0;

    explicit Parts(std::size_t data_size)
        : size(data_size),
          blocks(std::max<std::size_t>(1, (data_size + kBlockBytes - 1) / kBlockBytes)),
          count(std::clamp<std::size_t>(blocks / kMinPartBlocks, 1, kMaxParts)) {}

    std::size_t first_block(std::size_t part) const { return blocks * part / count; }
    std::size_t first_byte(std::size_t part) const {
        return std::min(size, first_block(part) * kBlockBytes);
    }
};

// Parts first .. last - 1 one after another into out, which has room for
// run_deflate_bound of their bytes; returns the bytes written. Each part
// ends on a whole byte, where the next begins (over the 8 bytes its bit
// writer may have stored past its end).
std::size_t write_parts(const std::uint8_t* data, const Parts& parts, std::size_t first,
                        std::size_t last, std::uint8_t* out) {
    std::vector<std::uint16_t> tokens(std::min(parts.size, kBlockBytes) + 8);
    std::uint8_t* p = out;
    for (std::size_t part = first; part < last; ++part) {
        p += write_blocks(data, parts.size, parts.first_block(part), parts.first_block(part + 1),
                          part + 1 == parts.count, tokens, p);
    }
    return static_cast<std::size_t>(p - out);
}

}  // namespace

std::size_t run_deflate_zlib(const std::uint8_t* data, std::size_t size, std::uint8_t* out,
                             int threads) {
    const Parts parts(size);
    std::uint8_t* p = out;
    *p++ = 0x78;  // CMF: deflate, 32 KB window
    *p++ = 0x01;  // FLG: fastest compression, check bits (0x7801 % 31 == 0)
    if (threads <= 1 || parts.count == 1) {
        p += write_parts(data, parts, 0, parts.count, p);
    } else {
        // At most `threads` stripes of parts on OpenCV's threads, each into
        // a buffer of its own (new[]: not zeroed first), kept by its first
        // part's number; then joined in order.
        std::vector<std::unique_ptr<std::uint8_t[]>> stripe_out(parts.count);
        std::vector<std::size_t> stripe_size(parts.count, 0);
        const std::size_t stripes = std::min(parts.count, static_cast<std::size_t>(threads));
        cv::parallel_for_(
            cv::Range(0, static_cast<int>(parts.count)),
            [&](const cv::Range& range) {
                const auto first = static_cast<std::size_t>(range.start);
                const auto last = static_cast<std::size_t>(range.end);
                const std::size_t bytes = parts.first_byte(last) - parts.first_byte(first);
                stripe_out[first].reset(new std::uint8_t[run_deflate_bound(bytes)]);
                stripe_size[first] = write_parts(data, parts, first, last, stripe_out[first].get());
            },
            static_cast<double>(stripes));
        for (std::size_t k = 0; k < parts.count; ++k) {
            if (stripe_out[k]) {
                p = std::copy(stripe_out[k].get(), stripe_out[k].get() + stripe_size[k], p);
            }
        }
    }
    const std::uint32_t adler = libdeflate_adler32(1, data, size);
    for (int shift = 24; shift >= 0; shift -= 8) *p++ = static_cast<std::uint8_t>(adler >> shift);
    return static_cast<std::size_t>(p - out);
}

}  // namespace cudaconv
