#include "kernels/codecs/png_deflate.hpp"

#include <cub/block/block_scan.cuh>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "core/deflate_codes.hpp"
#include "kernels/runtime/cuda_check.hpp"
#include "kernels/runtime/cuda_resources.hpp"
#include "kernels/runtime/pinned_staging.hpp"

namespace cudaconv {
namespace {

using namespace deflate;

constexpr int kThreads = 256;  // a block's threads: one stretch of its bytes each
// Bytes of rows a deflate block aims for: whole rows, at least one. About
// 600 blocks for a 12-megapixel RGB image, each coded by one CUDA block,
// for a header of about 100 bytes each (0.2%).
constexpr std::int64_t kBlockTargetBytes = std::int64_t{64} << 10;
// A dynamic header's bits: at most 17 + 19 * 3 + 287 * (7 + 7) = 4092.
constexpr int kHeaderWords = 128;
constexpr int kTokenValues = 256 + kMaxRun + 1;  // a byte, or 256 + a run's length
constexpr std::uint8_t kFilterNone = 0;
constexpr std::uint8_t kFilterUp = 2;
constexpr std::uint32_t kAdlerBase = 65521;
constexpr int kMaxSampleRows = 32;

// The stream's bytes: rows of 1 + row_bytes (filter byte first), in
// deflate blocks of rows_per_block rows (the last maybe fewer).
struct Geometry {
    std::int64_t row_bytes = 0;
    std::int64_t rows = 0;
    std::int64_t rows_per_block = 0;
    std::int64_t blocks = 0;

    CC_HD std::int64_t stride() const { return row_bytes + 1; }
    CC_HD std::uint64_t size() const { return static_cast<std::uint64_t>(stride() * rows); }
    CC_HD std::uint64_t block_begin(std::int64_t b) const {
        return static_cast<std::uint64_t>(b * rows_per_block * stride());
    }
    CC_HD std::uint64_t block_end(std::int64_t b) const {
        const std::int64_t last = (b + 1) * rows_per_block;
        return static_cast<std::uint64_t>((last < rows ? last : rows) * stride());
    }
};

Geometry geometry_of(const DeviceImageRows& image) {
    Geometry g;
    g.row_bytes =
        image.width * image.channels * static_cast<std::int64_t>(depth_bytes(image.depth));
    g.rows = image.height;
    g.rows_per_block = std::max<std::int64_t>(1, kBlockTargetBytes / g.stride());
    g.blocks = (g.rows + g.rows_per_block - 1) / g.rows_per_block;
    return g;
}

// What planning found for one block.
struct BlockPlan {
    std::uint64_t dynamic_bits;  // the whole block with its own codes: header, data, end
    std::uint32_t header_bits;
    std::uint32_t adler_sum;       // Adler-32's two sums over the block's bytes, alone
    std::uint32_t adler_weighted;  // (each byte weighted by its distance from the end)
    std::uint8_t filter;           // kFilterNone or kFilterUp
};

// Where the blocks went, and the stream's size and checksum.
struct StreamLayout {
    std::uint64_t bits;
    std::uint32_t adler;
    std::uint32_t unused;  // written too: the host copies the whole struct
};

// ---- PNG rows --------------------------------------------------------------
// Both filters of every row, each row after its filter byte: None (the
// bytes in PNG's order: RGB(A) for BGR(A), 16-bit samples big-endian) and
// Up (each byte minus the one above; row 0 as it is).
template <typename T, int C>
__global__ void filter_rows_kernel(DeviceImageRows image, Geometry g, std::uint8_t* none,
                                   std::uint8_t* up) {
    constexpr int kPixelBytes = C * static_cast<int>(sizeof(T));
    for (std::int64_t y = blockIdx.y; y < g.rows; y += gridDim.y) {
        const T* row = reinterpret_cast<const T*>(image.data + y * image.pitch);
        const T* above = y > 0 ? reinterpret_cast<const T*>(image.data + (y - 1) * image.pitch)
                               : nullptr;
        std::uint8_t* out_none = none + y * g.stride();
        std::uint8_t* out_up = up + y * g.stride();
        for (std::int64_t x = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
             x < g.stride(); x += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
            if (x == 0) {
                out_none[0] = kFilterNone;
                out_up[0] = kFilterUp;
                continue;
            }
            // 32-bit arithmetic: a row is under 2^27 bytes (png_rows_on_device_supported).
            const auto at = static_cast<std::uint32_t>(x - 1);
            const std::uint32_t pixel = at / kPixelBytes;
            const int byte = static_cast<int>(at % kPixelBytes);
            const int c = byte / static_cast<int>(sizeof(T));
            const int from = C >= 3 && c < 3 ? 2 - c : c;  // BGR(A) -> RGB(A)
            const unsigned v = row[pixel * C + from];
            const unsigned a = above ? above[pixel * C + from] : 0u;
            const int shift = sizeof(T) == 2 && byte % 2 == 0 ? 8 : 0;  // high byte first
            const auto vb = static_cast<std::uint8_t>(v >> shift);
            out_none[x] = vb;
            out_up[x] = static_cast<std::uint8_t>(vb - static_cast<std::uint8_t>(a >> shift));
        }
    }
}

// ---- Tokens ----------------------------------------------------------------
// The tokens of data[begin, end), as the CPU writer makes them: a byte
// equal to the one before starts a run of it (a match at distance 1) when
// at least 3 follow, up to 258; otherwise bytes are literals. A deflate
// block's first byte (block_start) is always a literal: the byte before it
// is the previous block's, which may have taken the other filter, so it
// need not be data[begin - 1].
template <typename Sink>
__device__ void for_each_token(const std::uint8_t* data, std::uint64_t begin, std::uint64_t end,
                               bool block_start, Sink& sink) {
    std::uint64_t i = begin;
    if (i >= end) return;
    unsigned previous;
    if (block_start) {
        previous = data[i];
        sink.literal(previous);
        ++i;
    } else {
        previous = data[i - 1];
    }
    while (i < end) {
        const unsigned b = data[i];
        if (b != previous) {
            sink.literal(b);
            previous = b;
            ++i;
            continue;
        }
        const std::uint64_t left = end - i;
        const unsigned limit = left < kMaxRun ? static_cast<unsigned>(left) : kMaxRun;
        unsigned run = 1;
        while (run < limit && data[i + run] == previous) ++run;
        if (run >= kMinRun) {
            sink.run(run);
        } else {
            for (unsigned k = 0; k < run; ++k) sink.literal(previous);
        }
        i += run;
    }
}

struct CountSymbols {
    std::uint32_t* freq;  // shared: the literal/length alphabet
    __device__ void literal(unsigned b) { atomicAdd(&freq[b], 1u); }
    __device__ void run(unsigned length) { atomicAdd(&freq[length_code(length).symbol], 1u); }
};

struct CountBits {
    const std::uint8_t* token_bit_count;  // shared, by token value
    std::uint32_t bits = 0;
    __device__ void literal(unsigned b) { bits += token_bit_count[b]; }
    __device__ void run(unsigned length) { bits += token_bit_count[256 + length]; }
};

// A thread's bits from a stream position on, into 32-bit words of a zeroed
// buffer. Only its first and last words can hold another thread's bits
// too, so those are ORed in atomically and the ones between stored.
class WordWriter {
public:
    __device__ WordWriter(std::uint32_t* out, std::uint64_t position)
        : out_(out), word_(position >> 5), count_(static_cast<int>(position & 31)) {}

    __device__ void put(std::uint32_t value, int bits) {  // bits <= 32
        buffer_ |= static_cast<std::uint64_t>(value) << count_;
        count_ += bits;
        if (count_ >= 32) {
            if (first_) {
                atomicOr(&out_[word_], static_cast<std::uint32_t>(buffer_));
                first_ = false;
            } else {
                out_[word_] = static_cast<std::uint32_t>(buffer_);
            }
            ++word_;
            buffer_ >>= 32;
            count_ -= 32;
        }
    }

    __device__ void flush() {
        if (count_ > 0) atomicOr(&out_[word_], static_cast<std::uint32_t>(buffer_));
    }

private:
    std::uint32_t* out_;
    std::uint64_t word_;
    std::uint64_t buffer_ = 0;
    int count_;
    bool first_ = true;
};

struct WriteTokens {
    const std::uint32_t* token_bits;  // shared, by token value
    const std::uint8_t* token_bit_count;
    WordWriter& writer;
    __device__ void literal(unsigned b) { writer.put(token_bits[b], token_bit_count[b]); }
    __device__ void run(unsigned length) {
        writer.put(token_bits[256 + length], token_bit_count[256 + length]);
    }
};

// ORs up to 32 bits in at a stream position (bits shared with other threads).
__device__ void or_bits(std::uint32_t* out, std::uint64_t position, std::uint32_t value, int bits) {
    const std::uint64_t word = position >> 5;
    const int shift = static_cast<int>(position & 31);
    atomicOr(&out[word], value << shift);
    if (shift + bits > 32) atomicOr(&out[word + 1], value >> (32 - shift));
}

__device__ void or_byte(std::uint32_t* out, std::uint64_t byte_position, std::uint32_t value) {
    atomicOr(&out[byte_position >> 2], value << (8 * (byte_position & 3)));
}

// A header's bits, one thread, into words of its own.
class HeaderWriter {
public:
    __device__ explicit HeaderWriter(std::uint32_t* out) : out_(out) {}
    __device__ void put(std::uint32_t value, int bits) {
        buffer_ |= static_cast<std::uint64_t>(value) << count_;
        count_ += bits;
        if (count_ >= 32) {
            *out_++ = static_cast<std::uint32_t>(buffer_);
            buffer_ >>= 32;
            count_ -= 32;
        }
    }
    __device__ void flush() {
        if (count_ > 0) *out_ = static_cast<std::uint32_t>(buffer_);
    }

private:
    std::uint32_t* out_;
    std::uint64_t buffer_ = 0;
    int count_ = 0;
};

// Thread t's stretch of a block's bytes [begin, end): 256 nearly equal parts.
__device__ void stretch_of(std::uint64_t begin, std::uint64_t end, std::uint64_t& first,
                           std::uint64_t& last) {
    const std::uint64_t n = end - begin;
    const std::uint64_t length = (n + kThreads - 1) / kThreads;
    const std::uint64_t t = threadIdx.x;
    first = begin + min(n, t * length);
    last = begin + min(n, (t + 1) * length);
}

// Each token's bits under a block's codes (as the CPU writer's tables): a
// byte's code; a run's length code, its extra bits, then distance code 0.
__device__ void token_tables(const std::uint8_t* lit_len, const std::uint16_t* lit_code,
                             std::uint32_t* token_bits, std::uint8_t* token_bit_count) {
    for (int t = threadIdx.x; t < kTokenValues; t += blockDim.x) {
        if (t < 256) {
            if (token_bits) token_bits[t] = lit_code[t];  // lit_code only with token_bits
            token_bit_count[t] = lit_len[t];
        } else if (t - 256 >= kMinRun) {
            const LengthCode lc = length_code(t - 256);
            const int len = lit_len[lc.symbol];
            if (token_bits) {
                token_bits[t] = lit_code[lc.symbol] | (static_cast<std::uint32_t>(lc.extra) << len);
            }
            token_bit_count[t] = static_cast<std::uint8_t>(len + lc.extra_bits + 1);
        } else {
            if (token_bits) token_bits[t] = 0;
            token_bit_count[t] = 0;
        }
    }
}

// ---- Planning: three kernels, one CUDA block a deflate block each ---------
// 1. Count the block's symbols under both filters, each thread its stretch.
// 2. Make both codes (two threads, one each), keep the filter that codes
//    smaller, write its codes and header. A kernel of its own, and small
//    blocks: the code making is one thread's sequential work, and with the
//    counting beside it the kernel took 255 registers, one block an SM, and
//    4.5 ms for a 12-megapixel image, in waves of such threads.
// 3. Measure each stretch in bits under the codes: where each thread's bits
//    will go. Also the block's own Adler-32 sums.
__global__ void __launch_bounds__(kThreads)
    count_symbols_kernel(const std::uint8_t* none, const std::uint8_t* up, Geometry g,
                         std::uint32_t* symbol_counts) {
    __shared__ std::uint32_t freq[2][kLitLenSymbols];
    const std::int64_t b = blockIdx.x;
    const std::uint64_t begin = g.block_begin(b);
    std::uint64_t first = 0;
    std::uint64_t last = 0;
    stretch_of(begin, g.block_end(b), first, last);
    for (int s = threadIdx.x; s < 2 * kLitLenSymbols; s += kThreads) {
        freq[s / kLitLenSymbols][s % kLitLenSymbols] = 0;
    }
    __syncthreads();
    CountSymbols count_none{freq[0]};
    for_each_token(none, first, last, first == begin, count_none);
    CountSymbols count_up{freq[1]};
    for_each_token(up, first, last, first == begin, count_up);
    __syncthreads();
    for (int s = threadIdx.x; s < 2 * kLitLenSymbols; s += kThreads) {
        symbol_counts[b * 2 * kLitLenSymbols + s] = freq[s / kLitLenSymbols][s % kLitLenSymbols];
    }
}

constexpr int kCodeThreads = 64;

__global__ void __launch_bounds__(kCodeThreads)
    make_codes_kernel(const std::uint32_t* symbol_counts, BlockPlan* plans, std::uint32_t* headers,
                      std::uint32_t* block_codes) {
    __shared__ std::uint32_t freq[2][kLitLenSymbols];
    __shared__ std::uint16_t order[2][kLitLenSymbols];
    __shared__ int leaves[2];
    __shared__ HuffmanScratch scratch[2];
    __shared__ DynamicCodes codes[2];
    __shared__ std::uint64_t estimate[2];
    const std::int64_t b = blockIdx.x;
    for (int s = threadIdx.x; s < 2 * kLitLenSymbols; s += kCodeThreads) {
        freq[s / kLitLenSymbols][s % kLitLenSymbols] = symbol_counts[b * 2 * kLitLenSymbols + s];
    }
    __syncthreads();
    if (threadIdx.x < 2) {
        freq[threadIdx.x][kEndOfBlock] = 1;
        use_two_symbols(freq[threadIdx.x], kLitLenSymbols);
    }
    __syncthreads();
    // Each used symbol's place in order of frequency, ties by symbol (what
    // a stable sort gives), counted by its own thread.
    for (int f = 0; f < 2; ++f) {
        int used = 0;
        for (int s = threadIdx.x; s < kLitLenSymbols; s += kCodeThreads) {
            const std::uint32_t mine = freq[f][s];
            if (mine == 0) continue;
            ++used;
            int rank = 0;
            for (int j = 0; j < kLitLenSymbols; ++j) {
                const std::uint32_t other = freq[f][j];
                rank += other != 0 && (other < mine || (other == mine && j < s));
            }
            order[f][rank] = static_cast<std::uint16_t>(s);
        }
        if (threadIdx.x == 0) leaves[f] = 0;
        __syncthreads();
        atomicAdd(&leaves[f], used);
    }
    __syncthreads();
    if (threadIdx.x % 32 == 0) {  // one thread a filter, in warps of their own
        const int f = static_cast<int>(threadIdx.x / 32);
        huffman_lengths(freq[f], kLitLenSymbols, order[f], leaves[f], kMaxCodeBits,
                        codes[f].lit_len, scratch[f]);
        finish_dynamic_codes(codes[f], scratch[f]);
        estimate[f] = codes[f].header_bits + data_bits(freq[f], codes[f]);
    }
    __syncthreads();
    const int f = estimate[1] < estimate[0] ? 1 : 0;
    const DynamicCodes& chosen = codes[f];
    for (int s = threadIdx.x; s < kLitLenSymbols; s += kCodeThreads) {
        block_codes[b * kLitLenSymbols + s] =
            (static_cast<std::uint32_t>(chosen.lit_len[s]) << 16) | chosen.lit_code[s];
    }
    if (threadIdx.x == 0) {
        HeaderWriter header(headers + b * kHeaderWords);
        write_dynamic_header(chosen, false, header);
        header.flush();
        plans[b].header_bits = chosen.header_bits;
        plans[b].filter = f == 1 ? kFilterUp : kFilterNone;
    }
}

__global__ void __launch_bounds__(kThreads)
    measure_blocks_kernel(const std::uint8_t* none, const std::uint8_t* up, Geometry g,
                          const std::uint32_t* block_codes, BlockPlan* plans,
                          std::uint32_t* stretch_offsets) {
    __shared__ std::uint8_t lit_len[kLitLenSymbols];
    __shared__ std::uint8_t token_bit_count[kTokenValues];
    __shared__ std::uint32_t adler_sum;
    __shared__ std::uint32_t adler_weighted;
    using Scan = cub::BlockScan<std::uint32_t, kThreads>;
    __shared__ typename Scan::TempStorage scan_storage;

    const std::int64_t b = blockIdx.x;
    const std::uint64_t begin = g.block_begin(b);
    const std::uint64_t end = g.block_end(b);
    std::uint64_t first = 0;
    std::uint64_t last = 0;
    stretch_of(begin, end, first, last);
    const std::uint8_t* data = plans[b].filter == kFilterUp ? up : none;
    for (int s = threadIdx.x; s < kLitLenSymbols; s += kThreads) {
        lit_len[s] = static_cast<std::uint8_t>(block_codes[b * kLitLenSymbols + s] >> 16);
    }
    if (threadIdx.x == 0) adler_sum = adler_weighted = 0;
    __syncthreads();
    token_tables(lit_len, nullptr, nullptr, token_bit_count);
    __syncthreads();

    CountBits count_bits{token_bit_count};
    for_each_token(data, first, last, first == begin, count_bits);
    // Adler-32 of the stretch alone: the sum of its bytes, and of each byte
    // times its distance from the stretch's end; then moved to the block's
    // end by adding the sum times the bytes after the stretch.
    std::uint64_t sum = 0;
    std::uint64_t weighted = 0;
    for (std::uint64_t i = first; i < last; ++i) {
        sum += data[i];
        weighted += sum;
    }
    weighted += sum * (end - last);
    atomicAdd(&adler_sum, static_cast<std::uint32_t>(sum % kAdlerBase));
    atomicAdd(&adler_weighted, static_cast<std::uint32_t>(weighted % kAdlerBase));
    std::uint32_t offset = 0;
    std::uint32_t data_bits_total = 0;
    Scan(scan_storage).ExclusiveSum(count_bits.bits, offset, data_bits_total);
    stretch_offsets[b * kThreads + threadIdx.x] = offset;
    __syncthreads();
    if (threadIdx.x == 0) {
        BlockPlan& plan = plans[b];
        plan.dynamic_bits =
            std::uint64_t{plan.header_bits} + data_bits_total + lit_len[kEndOfBlock];
        plan.adler_sum = adler_sum % kAdlerBase;
        plan.adler_weighted = adler_weighted % kAdlerBase;
    }
}

// ---- Layout: one CUDA block -------------------------------------------------
// Adler-32 of the whole from the blocks' sums, in parallel; then each
// block's place in the stream, one thread walking them (a stored block's
// size depends on where it starts, through the padding to a whole byte),
// stored where that is smaller. The sizes come through shared memory a
// slice at a time, so that the walk does not wait on each load.
constexpr int kLayoutThreads = 256;

__global__ void __launch_bounds__(kLayoutThreads)
    layout_kernel(const BlockPlan* plans, Geometry g, std::uint64_t* offsets, std::uint8_t* stored,
                  StreamLayout* layout) {
    __shared__ std::uint32_t sums[2];
    __shared__ std::uint64_t dynamic_bits[kLayoutThreads];
    __shared__ std::uint64_t at;
    const std::uint64_t n = g.size();
    if (threadIdx.x == 0) {
        sums[0] = sums[1] = 0;
        at = 0;
    }
    __syncthreads();
    std::uint32_t a = 0;
    std::uint32_t weighted = 0;
    for (std::int64_t b = threadIdx.x; b < g.blocks; b += kLayoutThreads) {
        const BlockPlan& plan = plans[b];
        const std::uint64_t after = (n - g.block_end(b)) % kAdlerBase;
        a = (a + plan.adler_sum) % kAdlerBase;
        weighted = static_cast<std::uint32_t>(
            (weighted + plan.adler_weighted + after * plan.adler_sum) % kAdlerBase);
    }
    atomicAdd(&sums[0], a);  // under 256 * 65521 each: no overflow
    atomicAdd(&sums[1], weighted);
    for (std::int64_t slice = 0; slice < g.blocks; slice += kLayoutThreads) {
        const std::int64_t b = slice + threadIdx.x;
        if (b < g.blocks) dynamic_bits[threadIdx.x] = plans[b].dynamic_bits;
        __syncthreads();
        if (threadIdx.x == 0) {
            std::uint64_t position = at;
            const std::int64_t count = min(std::int64_t{kLayoutThreads}, g.blocks - slice);
            for (std::int64_t k = 0; k < count; ++k) {
                const std::uint64_t bytes = g.block_end(slice + k) - g.block_begin(slice + k);
                const std::uint64_t as_stored = stored_bits(position, bytes);
                const bool store = as_stored < dynamic_bits[k];
                offsets[slice + k] = position;
                stored[slice + k] = store;
                position += store ? as_stored : dynamic_bits[k];
            }
            at = position;
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        layout->bits = at;
        layout->unused = 0;
        // The initial 1 of Adler-32's first sum, added once a byte to the second.
        const std::uint64_t second = (sums[1] + n % kAdlerBase) % kAdlerBase;
        const std::uint64_t first = (1 + sums[0]) % kAdlerBase;
        layout->adler = static_cast<std::uint32_t>((second << 16) | first);
    }
}

// ---- Writing: one CUDA block a deflate block --------------------------------
__global__ void __launch_bounds__(kThreads)
    write_blocks_kernel(const std::uint8_t* none, const std::uint8_t* up, Geometry g,
                        const BlockPlan* plans, const std::uint32_t* headers,
                        const std::uint32_t* block_codes, const std::uint32_t* stretch_offsets,
                        const std::uint64_t* offsets, const std::uint8_t* stored,
                        std::uint32_t* out) {
    __shared__ std::uint8_t lit_len[kLitLenSymbols];
    __shared__ std::uint16_t lit_code[kLitLenSymbols];
    __shared__ std::uint32_t token_bits[kTokenValues];
    __shared__ std::uint8_t token_bit_count[kTokenValues];

    const std::int64_t b = blockIdx.x;
    const bool final_block = b + 1 == g.blocks;
    const std::uint64_t begin = g.block_begin(b);
    const std::uint64_t end = g.block_end(b);
    const BlockPlan& plan = plans[b];  // by field: its padding is never written
    const std::uint8_t* data = plan.filter == kFilterUp ? up : none;
    const std::uint64_t at = offsets[b];

    if (stored[b]) {
        // Chunks of up to 65535 bytes: 3 header bits, padding to a byte,
        // LEN and NLEN, the bytes; chunk k's bytes start 5k bytes later than
        // they would without the chunk headers after the first.
        const std::uint64_t n = end - begin;
        const std::uint64_t start = (at + 3 + 7) / 8;  // the first LEN's byte
        const std::uint64_t chunks = n == 0 ? 1 : (n + kMaxStoredBytes - 1) / kMaxStoredBytes;
        if (threadIdx.x == 0) {
            for (std::uint64_t k = 0; k < chunks; ++k) {
                const std::uint64_t len_at = start + k * (kMaxStoredBytes + 5);
                const std::uint64_t header_at = k == 0 ? at : 8 * (len_at - 1);
                const bool final_chunk = final_block && k + 1 == chunks;
                or_bits(out, header_at, final_chunk ? 1u : 0u, 3);  // BFINAL, BTYPE 00
                const std::uint64_t count =
                    min(std::uint64_t{kMaxStoredBytes}, n - k * kMaxStoredBytes);
                or_byte(out, len_at, count & 0xFF);
                or_byte(out, len_at + 1, (count >> 8) & 0xFF);
                or_byte(out, len_at + 2, ~count & 0xFF);
                or_byte(out, len_at + 3, (~count >> 8) & 0xFF);
            }
        }
        for (std::uint64_t i = threadIdx.x; i < n; i += kThreads) {
            or_byte(out, start + 4 + i + 5 * (i / kMaxStoredBytes), data[begin + i]);
        }
        return;
    }

    for (int s = threadIdx.x; s < kLitLenSymbols; s += kThreads) {
        const std::uint32_t entry = block_codes[b * kLitLenSymbols + s];
        lit_len[s] = static_cast<std::uint8_t>(entry >> 16);
        lit_code[s] = static_cast<std::uint16_t>(entry);
    }
    __syncthreads();
    token_tables(lit_len, lit_code, token_bits, token_bit_count);
    __syncthreads();
    if (threadIdx.x == 0) {
        const std::uint32_t* header = headers + b * kHeaderWords;
        for (std::uint32_t bit = 0; bit < plan.header_bits; bit += 32) {
            const int bits = static_cast<int>(min(32u, plan.header_bits - bit));
            or_bits(out, at + bit, header[bit / 32], bits);
        }
        if (final_block) or_bits(out, at, 1, 1);  // BFINAL
        const int end_bits = lit_len[kEndOfBlock];
        or_bits(out, at + plan.dynamic_bits - end_bits, lit_code[kEndOfBlock], end_bits);
    }
    std::uint64_t first = 0;
    std::uint64_t last = 0;
    stretch_of(begin, end, first, last);
    WordWriter writer(out, at + plan.header_bits + stretch_offsets[b * kThreads + threadIdx.x]);
    WriteTokens write{token_bits, token_bit_count, writer};
    for_each_token(data, first, last, first == begin, write);
    writer.flush();
}

// The sample's rows, as the stream holds them (each block's filter).
struct SampleRows {
    int row[kMaxSampleRows];
};

__global__ void gather_rows_kernel(const std::uint8_t* none, const std::uint8_t* up, Geometry g,
                                   const BlockPlan* plans, SampleRows rows, std::uint8_t* out) {
    const std::int64_t y = rows.row[blockIdx.x];
    const std::uint8_t* from =
        (plans[y / g.rows_per_block].filter == kFilterUp ? up : none) + y * g.stride();
    std::uint8_t* to = out + blockIdx.x * g.stride();
    for (std::int64_t x = threadIdx.x; x < g.stride(); x += blockDim.x) to[x] = from[x];
}

// ---- Host side ------------------------------------------------------------
// Device buffers kept on this thread between images of one geometry (a
// batch's images are usually one size), as the CUDA variants keep theirs.
struct PngBuffers {
    Geometry geometry;
    std::size_t out_words = 0;
    DeviceArray<std::uint8_t> none{nullptr};
    DeviceArray<std::uint8_t> up{nullptr};
    DeviceArray<BlockPlan> plans{nullptr};
    DeviceArray<std::uint32_t> symbol_counts{nullptr};
    DeviceArray<std::uint32_t> headers{nullptr};
    DeviceArray<std::uint32_t> codes{nullptr};
    DeviceArray<std::uint32_t> stretch_offsets{nullptr};
    DeviceArray<std::uint64_t> offsets{nullptr};
    DeviceArray<std::uint8_t> stored{nullptr};
    DeviceArray<StreamLayout> layout{nullptr};
    DeviceArray<std::uint8_t> sample{nullptr};
    DeviceArray<std::uint32_t> out{nullptr};
};

thread_local PngBuffers t_png_buffers;

bool same(const Geometry& a, const Geometry& b) {
    return a.row_bytes == b.row_bytes && a.rows == b.rows;
}

PngBuffers& png_buffers(const Geometry& g) {
    PngBuffers& p = t_png_buffers;
    if (p.none && same(p.geometry, g)) return p;
    p = PngBuffers{};  // free first: the device may be nearly full
    const std::uint64_t n = g.size();
    const auto blocks = static_cast<std::size_t>(g.blocks);
    p.none = device_array<std::uint8_t>(n);
    p.up = device_array<std::uint8_t>(n);
    p.plans = device_array<BlockPlan>(blocks);
    p.symbol_counts = device_array<std::uint32_t>(blocks * 2 * kLitLenSymbols);
    p.headers = device_array<std::uint32_t>(blocks * kHeaderWords);
    p.codes = device_array<std::uint32_t>(blocks * kLitLenSymbols);
    p.stretch_offsets = device_array<std::uint32_t>(blocks * kThreads);
    p.offsets = device_array<std::uint64_t>(blocks);
    p.stored = device_array<std::uint8_t>(blocks);
    p.layout = device_array<StreamLayout>(1);
    p.sample = device_array<std::uint8_t>(kMaxSampleRows * static_cast<std::uint64_t>(g.stride()));
    // No block is larger than stored: its bytes, 5 a chunk of 65535 and one
    // of padding; then a word to spare.
    const std::uint64_t bound = n + 6 * (n / kMaxStoredBytes + blocks) + 8;
    p.out_words = static_cast<std::size_t>(bound / 4 + 2);
    p.out = device_array<std::uint32_t>(p.out_words);
    p.geometry = g;
    return p;
}

template <typename T, int C>
void launch_filter_rows(const DeviceImageRows& image, const Geometry& g, PngBuffers& p,
                        cudaStream_t stream) {
    const dim3 block(256);
    const auto across = static_cast<unsigned>(std::min<std::int64_t>((g.stride() + 255) / 256, 64));
    const dim3 grid(across, static_cast<unsigned>(std::min<std::int64_t>(g.rows, 65535)));
    filter_rows_kernel<T, C><<<grid, block, 0, stream>>>(image, g, p.none.get(), p.up.get());
}

void filter_rows(const DeviceImageRows& image, const Geometry& g, PngBuffers& p,
                 cudaStream_t stream) {
    const bool wide = image.depth == Depth::u16;
    switch (image.channels) {
        case 1:
            return wide ? launch_filter_rows<std::uint16_t, 1>(image, g, p, stream)
                        : launch_filter_rows<std::uint8_t, 1>(image, g, p, stream);
        case 3:
            return wide ? launch_filter_rows<std::uint16_t, 3>(image, g, p, stream)
                        : launch_filter_rows<std::uint8_t, 3>(image, g, p, stream);
        default:
            return wide ? launch_filter_rows<std::uint16_t, 4>(image, g, p, stream)
                        : launch_filter_rows<std::uint8_t, 4>(image, g, p, stream);
    }
}

}  // namespace

bool png_rows_on_device_supported(std::int64_t width, int channels, Depth depth) {
    constexpr std::int64_t kMaxRowBytes = std::int64_t{1} << 27;
    return (depth == Depth::u8 || depth == Depth::u16) &&
           (channels == 1 || channels == 3 || channels == 4) && width > 0 &&
           width * channels * static_cast<std::int64_t>(depth_bytes(depth)) < kMaxRowBytes;
}

void release_png_rows_buffers() { t_png_buffers = PngBuffers{}; }

DevicePngStream compress_png_rows(const DeviceImageRows& image, const std::vector<int>& sample_rows,
                                  cudaStream_t stream) {
    if (!png_rows_on_device_supported(image.width, image.channels, image.depth) ||
        image.height <= 0) {
        throw std::invalid_argument(
            "PNG rows on the device: u8 or u16 images of 1, 3 or 4 channels, rows under 128 MB");
    }
    if (sample_rows.size() > kMaxSampleRows) {
        throw std::invalid_argument("PNG rows on the device: at most 32 sample rows");
    }
    const Geometry g = geometry_of(image);
    PngBuffers& p = png_buffers(g);
    filter_rows(image, g, p, stream);
    CUDA_CHECK_LAUNCH();
    const auto blocks = static_cast<unsigned>(g.blocks);
    count_symbols_kernel<<<blocks, kThreads, 0, stream>>>(p.none.get(), p.up.get(), g,
                                                          p.symbol_counts.get());
    CUDA_CHECK_LAUNCH();
    make_codes_kernel<<<blocks, kCodeThreads, 0, stream>>>(p.symbol_counts.get(), p.plans.get(),
                                                           p.headers.get(), p.codes.get());
    CUDA_CHECK_LAUNCH();
    measure_blocks_kernel<<<blocks, kThreads, 0, stream>>>(
        p.none.get(), p.up.get(), g, p.codes.get(), p.plans.get(), p.stretch_offsets.get());
    CUDA_CHECK_LAUNCH();
    layout_kernel<<<1, kLayoutThreads, 0, stream>>>(p.plans.get(), g, p.offsets.get(),
                                                    p.stored.get(), p.layout.get());
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemsetAsync(p.out.get(), 0, p.out_words * sizeof(std::uint32_t), stream));
    write_blocks_kernel<<<blocks, kThreads, 0, stream>>>(
        p.none.get(), p.up.get(), g, p.plans.get(), p.headers.get(), p.codes.get(),
        p.stretch_offsets.get(), p.offsets.get(), p.stored.get(), p.out.get());
    CUDA_CHECK_LAUNCH();
    DevicePngStream result;
    if (!sample_rows.empty()) {
        SampleRows rows{};
        for (std::size_t k = 0; k < sample_rows.size(); ++k) rows.row[k] = sample_rows[k];
        gather_rows_kernel<<<static_cast<unsigned>(sample_rows.size()), 256, 0, stream>>>(
            p.none.get(), p.up.get(), g, p.plans.get(), rows, p.sample.get());
        CUDA_CHECK_LAUNCH();
        result.sample.resize(sample_rows.size() * static_cast<std::size_t>(g.stride()));
        CUDA_CHECK(cudaMemcpyAsync(result.sample.data(), p.sample.get(), result.sample.size(),
                                   cudaMemcpyDeviceToHost, stream));
    }
    StreamLayout layout{};
    CUDA_CHECK(
        cudaMemcpyAsync(&layout, p.layout.get(), sizeof layout, cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));

    // zlib's two header bytes (deflate, 32 KB window, fastest; 0x7801 % 31
    // == 0), the blocks, Adler-32 big-endian.
    const std::size_t deflate_bytes = static_cast<std::size_t>((layout.bits + 7) / 8);
    std::byte* const staging = pinned_staging(deflate_bytes);
    CUDA_CHECK(
        cudaMemcpyAsync(staging, p.out.get(), deflate_bytes, cudaMemcpyDeviceToHost, stream));
    result.zlib.resize(2 + deflate_bytes + 4);
    result.zlib[0] = 0x78;
    result.zlib[1] = 0x01;
    CUDA_CHECK(cudaStreamSynchronize(stream));
    std::memcpy(result.zlib.data() + 2, staging, deflate_bytes);
    for (int k = 0; k < 4; ++k) {
        result.zlib[2 + deflate_bytes + k] =
            static_cast<std::uint8_t>(layout.adler >> (24 - 8 * k));
    }
    return result;
}

}  // namespace cudaconv
