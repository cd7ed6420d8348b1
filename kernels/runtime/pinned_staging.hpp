#pragma once
// A page-locked host buffer a thread keeps for its copies of encoded
// files: down, a PNG's deflate stream or nvJPEG's bitstream; up, the JPEG
// files of a call of the GPU's decoder. A copy between the device and
// ordinary memory goes through the driver's own staging buffers, shared
// by every thread of the process, so it waits behind the other threads'
// such copies; from or into page-locked memory it goes straight, at full
// speed. The buffer grows to the most asked of it (a quarter more, so
// that a little more still fits) and is freed when the thread ends.
#include <cstddef>

namespace cudaconv {

// This thread's buffer, at least `bytes` long; valid until the next call
// on this thread. Throws CudaError where page-locked memory runs out.
std::byte* pinned_staging(std::size_t bytes);

}  // namespace cudaconv
