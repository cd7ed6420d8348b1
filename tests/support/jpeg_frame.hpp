#pragma once
// What a JPEG file's frame header (SOF) says of its components, read from
// the bytes, so that tests can tell the chroma sampling an encoder wrote.
#include <cstdint>
#include <vector>

namespace cudaconv::test {

struct JpegComponent {
    int id = 0;
    int h = 0, v = 0;  // sampling factors
};

// The first frame header's components; empty where there is none.
std::vector<JpegComponent> jpeg_components(const std::vector<std::uint8_t>& file);

}  // namespace cudaconv::test
