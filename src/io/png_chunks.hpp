#pragma once
// A PNG chunk, as the encoder and the metadata writer append them.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace cudaconv {

// Appends a chunk to `out`: length, type, data, CRC-32 of type and data.
void put_png_chunk(std::vector<std::uint8_t>& out, const char (&type)[5], const std::uint8_t* data,
                   std::size_t size);

}  // namespace cudaconv
