#pragma once
// A TIFF output's metadata, written by Exiv2 into the TIFF that OpenCV's
// encoder made: the ICC profile as tag 34675 (InterColorProfile) and the
// EXIF block's tags in the TIFF's own structure, its first directory's
// camera tags (Make, Model, DateTime, Orientation...) beside the image's,
// the Exif and GPS directories as the sub-directories tags 34665 and 34853
// point to. A TIFF has no place for an EXIF block as such, so the block is
// parsed and its tags rewritten; the image's own tags (size, samples,
// compression, strips) and its strips are kept as the encoder wrote them.
// Built with Exiv2 where CUDACONV_WITH_EXIV2 is on (tiff_metadata.cpp);
// without it (tiff_metadata_none.cpp) a TIFF output carries none.
#include <cstdint>
#include <string>
#include <vector>

#include "io/metadata.hpp"

namespace cudaconv {

// Whether a lower-case extension (".tif") names a TIFF output.
inline bool is_tiff_extension(const std::string& extension) {
    return extension == ".tif" || extension == ".tiff";
}

// `file` (a TIFF) with `metadata`'s profile and EXIF tags. The EXIF block's
// thumbnail directory (IFD1) is left out: it would be a second image in
// the file. Never throws for the metadata's content: a block Exiv2 cannot
// read, or cannot write into this file, is left out (the profile alone is
// then tried), and where nothing can be written `file` comes back as it
// was. Not a TIFF, or a build without Exiv2: `file` unchanged.
std::vector<std::uint8_t> tiff_with_metadata(std::vector<std::uint8_t> file,
                                             const ImageMetadata& metadata);

// Exiv2's version ("0.27.6"); empty in a build without it.
std::string exiv2_version();

}  // namespace cudaconv
