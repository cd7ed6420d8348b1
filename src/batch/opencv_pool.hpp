#pragma once
// OpenCV's pool of threads (cv::parallel_for_: the cpu variant, the PNG
// encoder, touch_pages; TBB in Debian's OpenCV) makes its threads when a
// parallel loop first wants them. Where the system will not make one then,
// TBB throws from the thread that was starting it: into the loop's caller,
// which fails that image, or, on a machine with more than a few cores, from
// one of the pool's own threads, which ends the process (std::terminate,
// exit 134, whatever temporary file is being written left behind). A batch
// of many workers is just what uses up the threads or the address space the
// pool would have had.
namespace cudaconv {

// Has the pool make its threads now, before the batch's own threads start:
// as many plain threads as the pool would make, and the few a batch cannot
// run without, are started first, to see whether the system gives them
// (and ended again); where it gives fewer, the pool takes half of what is
// left once the batch's few are set aside (down to 1: parallel loops run
// on the calling thread), with a warning. Call before any other thread
// starts.
void start_opencv_pool();

}  // namespace cudaconv
