#include "batch/heap_reuse.hpp"

#include <cstdlib>  // defines __GLIBC__ where it is glibc

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace cudaconv {

void keep_freed_buffers_in_heap() {
#if defined(__GLIBC__)
    // Blocks up to 512 MB from the heap, not mapped on their own; the heap's
    // free top returned to the kernel only past 1 GB.
    mallopt(M_MMAP_THRESHOLD, 512 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    // One heap for all threads: a thread's own heap (glibc's arena) holds
    // at most 64 MB, so larger images (16-bit, 4 channels) would be mapped
    // on their own again; and an image freed on another worker than the
    // one that decoded it returns to one heap all workers draw from. The
    // lock is taken a few times an image.
    mallopt(M_ARENA_MAX, 1);
#endif
}

}  // namespace cudaconv
