#include "batch/heap_reuse.hpp"

#include <cstdlib>  // defines __GLIBC__ where it is glibc

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace cudaconv {

bool keep_freed_buffers_in_heap() {
#if defined(__GLIBC__)
    // Blocks up to 512 MB from the heap, not mapped on their own. Older
    // glibc refuses a threshold over HEAP_MAX_SIZE / 2 (32 MB on 64-bit
    // machines) and returns 0; then the rest stays as it is: setting the
    // trim threshold alone would turn off glibc's dynamic mmap threshold
    // (which rises to the size of a mapped block once it is freed, up to
    // that same 32 MB), so fewer blocks would be reused than by default;
    // and one arena is worth its lock only where the heap keeps the images.
    if (mallopt(M_MMAP_THRESHOLD, 512 << 20) == 0) return false;
    // The heap's free top returned to the kernel only past 1 GB.
    const bool trim_set = mallopt(M_TRIM_THRESHOLD, 1 << 30) != 0;
    // One heap for all threads: a thread's own heap (glibc's arena) holds
    // at most 64 MB, so larger images (16-bit, 4 channels) would be mapped
    // on their own again; and an image freed on another worker than the
    // one that decoded it returns to one heap all workers draw from. The
    // lock is taken a few times an image.
    const bool one_arena = mallopt(M_ARENA_MAX, 1) != 0;
    return trim_set && one_arena;
#else
    return false;
#endif
}

}  // namespace cudaconv
