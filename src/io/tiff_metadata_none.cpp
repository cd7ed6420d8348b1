// tiff_metadata.hpp in a build without Exiv2 (CUDACONV_WITH_EXIV2 off, as
// the GPU machine's portable build, whose OpenCV writes no TIFF): a TIFF
// output carries no metadata, and --version says Exiv2 is not built in.
#include "io/tiff_metadata.hpp"

namespace cudaconv {

std::vector<std::uint8_t> tiff_with_metadata(std::vector<std::uint8_t> file,
                                             const ImageMetadata& /*metadata*/) {
    return file;
}

std::string exiv2_version() { return ""; }

}  // namespace cudaconv
