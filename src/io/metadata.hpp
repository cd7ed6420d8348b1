#pragma once
// A photo's metadata carried from its input to its output: the EXIF block
// (camera, date, exposure, GPS...) and the ICC colour profile, which
// without it a wide-gamut photo is shown in the wrong colours. Read from a
// JPEG (the first EXIF APP1, the ICC_PROFILE APP2 chunks in their order)
// or a PNG (eXIf, iCCP); written into a JPEG or PNG output by splicing
// segments or chunks into the encoded file, so every encoder's output,
// CPU or GPU, gets them alike, and into a TIFF output by Exiv2, as tags
// (tiff_metadata.hpp). Other output formats get none. --strip keeps none.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cudaconv {

struct ImageMetadata {
    std::vector<std::uint8_t> exif;  // the TIFF structure of the EXIF block
    std::vector<std::uint8_t> icc;   // the ICC profile
    bool empty() const { return exif.empty() && icc.empty(); }
};

// What a JPEG or PNG file's bytes hold; empty for other formats. Never
// throws for the file's content: a malformed block or profile is left out.
ImageMetadata read_metadata(const std::uint8_t* data, std::size_t size);

// The EXIF block's orientation set to 1 (upright), for pixels that were
// turned upright on reading; nothing where there is no orientation tag.
void mark_upright(ImageMetadata& metadata);

// `file` (an encoded JPEG, PNG or TIFF, by `extension`) with `metadata`
// spliced in: APP1 and APP2 segments after the JPEG's SOI and JFIF APP0,
// eXIf and iCCP chunks after the PNG's IHDR, tags in the TIFF's first
// directory and its Exif and GPS sub-directories (tiff_with_metadata). An
// EXIF block over a JPEG segment's 65,527 bytes is left out of a JPEG.
// Other extensions: `file` unchanged.
std::vector<std::uint8_t> with_metadata(std::vector<std::uint8_t> file,
                                        const std::string& extension,
                                        const ImageMetadata& metadata);

}  // namespace cudaconv
