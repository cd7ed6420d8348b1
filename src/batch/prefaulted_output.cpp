#include "batch/prefaulted_output.hpp"

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <utility>

namespace cudaconv {

void PrefaultedOutput::start(int rows, int cols, int type) {
    if (started_) throw std::logic_error("PrefaultedOutput::start: started already");
    started_ = true;
    const auto prefault = [this, rows, cols, type] {
        try {
            cv::Mat image(rows, cols, type);
            // All cores: the decode holds one, the rest are idle until it ends.
            touch_pages(image, cv::getNumThreads());
            image_ = std::move(image);
        } catch (const std::exception&) {
            // Out of memory for a guess: the filter allocates as it would have.
        }
    };
    if (!thread_.start(prefault)) prefault();
}

cv::Mat PrefaultedOutput::take(int rows, int cols, int type) {
    thread_.join();
    cv::Mat image = std::move(image_);
    image_ = cv::Mat();
    if (image.rows != rows || image.cols != cols || image.type() != type) return {};
    return image;
}

void touch_pages(cv::Mat& m, int threads) {
    // 4096 or a multiple of it: every page is still written. The last byte
    // too: the buffer need not start on a page, so the last write of the
    // loop, up to a page before the end, may fall short of the last page.
    constexpr std::size_t kPageBytes = 4096;
    // Not m.dataend: on a ROI that is its parent's end.
    if (!m.isContinuous()) throw std::invalid_argument("touch_pages: rows with gaps between them");
    std::uint8_t* begin = m.data;
    const std::size_t bytes = m.total() * m.elemSize();
    if (bytes == 0) return;
    const std::size_t pages = (bytes + kPageBytes - 1) / kPageBytes;
    auto touch = [&](const cv::Range& range) {
        for (auto page = static_cast<std::size_t>(range.start);
             page < static_cast<std::size_t>(range.end); ++page) {
            begin[page * kPageBytes] = 0;
        }
    };
    if (threads > 1) {
        cv::parallel_for_(cv::Range(0, static_cast<int>(pages)), touch, threads);
    } else {
        touch(cv::Range(0, static_cast<int>(pages)));
    }
    begin[bytes - 1] = 0;
}

}  // namespace cudaconv
