#pragma once
// Whether the GPU can encode JPEG outputs here, with no CUDA type in sight
// so that src/ includes it in every build (the encoder itself is
// jpeg_encoder.hpp, called by the CUDA variants).
#include <string>

namespace cudaconv {

// "" where nvJPEG loads; else why not, in words (no CUDA in this build,
// no nvJPEG library).
std::string gpu_jpeg_encoder_problem();

}  // namespace cudaconv
