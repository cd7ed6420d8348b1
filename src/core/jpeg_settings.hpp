#pragma once
// How a JPEG output is encoded: the same settings for the CPU's writer
// (io/jpeg_writer.hpp, libjpeg) and the GPU's (kernels/codecs/jpeg_encoder.hpp,
// nvJPEG), so that --encoder changes where the work is done, not what is asked.
#include <cstdint>
#include <optional>
#include <string_view>

namespace cudaconv {

// The chroma planes' resolution in a colour JPEG: 4:2:0 halves it both ways
// (libjpeg's default, and the smallest files), 4:2:2 across only, 4:4:4
// keeps it whole (sharp coloured edges; files about a third larger). A gray
// image has no chroma, whatever is asked.
enum class ChromaSampling : std::uint8_t { s420, s422, s444 };

struct JpegSettings {
    int quality = 95;  // 0..100 as libjpeg's scale (OpenCV's default)
    ChromaSampling sampling = ChromaSampling::s420;
};

// "420", "422", "444": --jpeg-sampling's words.
std::string_view chroma_sampling_name(ChromaSampling sampling);
std::optional<ChromaSampling> parse_chroma_sampling(std::string_view text);

}  // namespace cudaconv
