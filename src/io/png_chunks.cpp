#include "io/png_chunks.hpp"

#include <libdeflate.h>

namespace cudaconv {

namespace {

void put_u32(std::vector<std::uint8_t>& out, std::uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8)
        out.push_back(static_cast<std::uint8_t>(v >> shift));
}

}  // namespace

void put_png_chunk(std::vector<std::uint8_t>& out, const char (&type)[5], const std::uint8_t* data,
                   std::size_t size) {
    put_u32(out, static_cast<std::uint32_t>(size));
    const std::size_t type_at = out.size();
    out.insert(out.end(), type, type + 4);
    if (size > 0) out.insert(out.end(), data, data + size);
    put_u32(out, libdeflate_crc32(0, out.data() + type_at, size + 4));
}

}  // namespace cudaconv
