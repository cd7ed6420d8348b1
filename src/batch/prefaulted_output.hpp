#pragma once
// One image filtered on the CPU: its output's pages faulted in while it
// decodes. A fresh 12-megapixel RGB output is 9000 pages, which the kernel
// zeroes and maps one fault at a time; taken inside the filter, they made
// its first run 7-10 ms against 4.4-4.7 ms once the pages were there (16
// cores, docs/PERFORMANCE.md, issue 6's single image). A JPEG decodes on one
// core for 70-110 ms meanwhile, so another thread (and OpenCV's pool, which
// this also starts) can take them then. The size and sample type come from
// the file's header, before the decode: a guess that decode() checks, so a
// wrong one costs only the unused buffer.
#include <opencv2/core.hpp>

#include "batch/thread_group.hpp"

namespace cudaconv {

class PrefaultedOutput {
public:
    PrefaultedOutput() = default;
    PrefaultedOutput(const PrefaultedOutput&) = delete;
    PrefaultedOutput& operator=(const PrefaultedOutput&) = delete;

    // Makes a rows x cols image of `type` and writes to each of its pages,
    // on a thread of its own (on the calling thread where the system will
    // not start one). At most once.
    void start(int rows, int cols, int type);
    // That image when it is what is asked for (waiting for it if need be),
    // else an empty one; the guess is given up either way.
    cv::Mat take(int rows, int cols, int type);

private:
    bool started_ = false;
    cv::Mat image_;
    ThreadGroup thread_;  // last: joined before the image it fills goes
};

// One write a page of m's memory (and its last byte), on the calling thread
// or, with `threads` above 1, on OpenCV's pool. m's rows must be continuous.
void touch_pages(cv::Mat& m, int threads = 1);

}  // namespace cudaconv
