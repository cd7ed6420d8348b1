#pragma once
// NumPy's .npy format (version 1.0 to 3.0), float32 in C order only: what
// a filter bank's stacked responses are written as (--combine stack) and
// what a float image may be read from. A small strict reader: the magic,
// the version, the header's dict (descr '<f4', fortran_order False, a
// shape of the sizes the caller expects: 2 or 3 for an image) and the data's length are all checked against
// the file, so a truncated file, a header that lies or an absurd shape is
// one error, before any pixel is allocated.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cudaconv {

struct NpyArray {
    std::vector<std::int64_t> shape;  // (H, W) or (H, W, C) for an image
    std::vector<float> data;          // C order: the last index fastest
};

// The largest header the reader takes (NumPy writes under 128 bytes for
// the arrays here); a larger length is refused as absurd.
constexpr std::size_t kNpyLargestHeader = 64 * 1024;

// The dimensions an array must have, and what the refusal calls it: an
// image is (H, W) or (H, W, C); a layer's weights are 4-D, its bias 1-D.
struct NpyRank {
    int min = 2, max = 3;
    const char* expected = "an image is (H, W) or (H, W, C)";
};
constexpr NpyRank kNpyImageRank{};

// What a .npy file's header says: its shape, how many samples that is, and
// where the data starts.
struct NpyHeader {
    std::vector<std::int64_t> shape;
    std::size_t samples = 0;
    std::size_t data_offset = 0;
};

// The header, from the file's first `size` bytes (the data need not be
// among them). Throws std::invalid_argument as parse_npy does.
NpyHeader read_npy_header(const std::uint8_t* bytes, std::size_t size,
                          const NpyRank& rank = kNpyImageRank);

// Throws std::invalid_argument as parse_npy does unless the data after
// `header` fills a file of `size` bytes exactly.
void check_npy_data(const NpyHeader& header, std::size_t size);

// Parses a whole .npy file's bytes. Throws std::invalid_argument with the
// problem (`name` not included) for anything but float32 C-order data of
// `rank`'s dimensions that exactly fills the file.
NpyArray parse_npy(const std::uint8_t* bytes, std::size_t size,
                   const NpyRank& rank = kNpyImageRank);

// The .npy file (version 1.0) of a float32 array of `shape` in C order,
// its header padded to 64 bytes as NumPy pads it.
std::vector<std::uint8_t> encode_npy(const std::vector<std::int64_t>& shape, const float* data);

}  // namespace cudaconv
