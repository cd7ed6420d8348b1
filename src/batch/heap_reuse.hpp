#pragma once
// Image-sized buffers come and go with every image of a batch: the decoded
// image, the filtered one, the PNG encoder's rows and output. glibc gives
// each such block back to the kernel when it is freed (it maps blocks over
// 128 KB on their own), so the next image's block is fresh pages, which the
// kernel zeroes and maps one fault at a time: about 25 ms for 36 MB here,
// on a worker that could be decoding. Kept in the heap instead, a freed
// block is reused as it is. Measured on the GPU machine (16 cores, 200
// 12-megapixel JPEGs to PNG, two runs each): -f none 51-60 -> 69-75
// images/s, -f edge 40-45 -> 49-55, a 31x31 filter 32-39 -> 42-46; the
// process keeps its peak until it ends (3.1 GB for the edge batch, against
// 2.3). docs/PERFORMANCE.md, "Why the pipeline is built so".
namespace cudaconv {

// Call before any other thread starts. Returns whether the C library took
// every setting; where it refuses the first (older glibc), it leaves the
// others alone. Does nothing, and returns false, on other C libraries.
bool keep_freed_buffers_in_heap();

}  // namespace cudaconv
