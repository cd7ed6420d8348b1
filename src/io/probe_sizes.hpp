#pragma once
// The image size in the headers of BMP, PNM/PAM, PFM, WebP, Sun raster,
// Radiance HDR, OpenEXR and JPEG 2000 files (JPEG, PNG and TIFF are read
// in format_probe.cpp).
#include <cstddef>
#include <cstdint>

#include "io/format_probe.hpp"

namespace cudaconv::detail {

// Sets probe.width, height and pixel_bytes from the header of a file of
// probe.format; leaves them 0 when the header cannot be read or claims no
// plausible size.
void read_header_size(const std::uint8_t* data, std::size_t size, FormatProbe& probe);

}  // namespace cudaconv::detail
