#pragma once
// A page-locked host buffer a thread keeps for its downloads of encoded
// files (PNG's deflate stream, nvJPEG's bitstream). A copy from the device
// to ordinary memory goes through the driver's own staging buffers, shared
// by every thread of the process, so it waits behind the copies of the GPU
// JPEG decoder's bitstreams; into page-locked memory it goes straight, at
// full speed. The buffer grows to the largest file (a quarter more, so
// that files a little larger still fit) and is freed when the thread ends.
#include <cstddef>

namespace cudaconv {

// This thread's buffer, at least `bytes` long; valid until the next call
// on this thread. Throws CudaError where page-locked memory runs out.
std::byte* pinned_staging(std::size_t bytes);

}  // namespace cudaconv
