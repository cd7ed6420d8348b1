#include "bench/opencv_peer.hpp"

#include <chrono>
#include <optional>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include "filters/rank1.hpp"

namespace cudaconv {
namespace {

int cv_depth(Depth depth) {
    return depth == Depth::u8 ? CV_8U : depth == Depth::u16 ? CV_16U : CV_32F;
}

cv::Mat mat_of(const ConstImageView& v) {
    return cv::Mat(static_cast<int>(v.height), static_cast<int>(v.width),
                   CV_MAKETYPE(cv_depth(v.depth), v.channels), const_cast<std::byte*>(v.data),
                   static_cast<std::size_t>(v.row_bytes));
}

cv::Mat mat_of(const ImageView& v) {
    return cv::Mat(static_cast<int>(v.height), static_cast<int>(v.width),
                   CV_MAKETYPE(cv_depth(v.depth), v.channels), v.data,
                   static_cast<std::size_t>(v.row_bytes));
}

std::optional<int> cv_border(BorderMode border) {
    switch (border) {
        case BorderMode::reflect101: return cv::BORDER_REFLECT_101;
        case BorderMode::reflect: return cv::BORDER_REFLECT;
        case BorderMode::replicate: return cv::BORDER_REPLICATE;
        case BorderMode::constant: return cv::BORDER_CONSTANT;
        default: return std::nullopt;  // wrap, valid
    }
}

cv::Mat taps_mat(const std::vector<double>& taps, int rows, int cols) {
    cv::Mat m(rows, cols, CV_32F);
    for (int k = 0; k < rows * cols; ++k) m.at<float>(k) = static_cast<float>(taps[k]);
    return m;
}

class OpenCvPeer final : public Backend {
public:
    std::string_view name() const override { return kOpenCvPeer; }
    std::string_view summary() const override {
        return "peer: cv::filter2D, or cv::sepFilter2D for rank-1 filters";
    }
    bool uses_cuda() const override { return false; }
    std::optional<int> auto_rank(const Job&) const override { return std::nullopt; }

    Support can_run(const Job& job) const override {
        const ConvParams& p = job.params;
        if (!cv_border(p.border)) {
            return Support::no("OpenCV's filters have no " + std::string(border_name(p.border)) +
                               " border");
        }
        if (p.border == BorderMode::constant && p.border_value != 0.0) {
            return Support::no("cv::filter2D's constant border is 0 only");
        }
        if (job.src.depth != job.dst.depth) return Support::no("input and output depths differ");
        if (p.scale != 1.0 || p.take_abs) return Support::no("--scale and --abs are not OpenCV's");
        if (job.filtered_channels() != job.src.channels) {
            return Support::no("OpenCV filters an alpha channel too");
        }
        return Support::yes();
    }

    RunTimings run(const Job& job, const RunOptions& options) override {
        const ConvParams& p = job.params;
        const cv::Mat src = mat_of(job.src);
        cv::Mat dst = mat_of(job.dst);
        const cv::Point anchor(p.anchor_x, p.anchor_y);
        const int border = *cv_border(p.border);
        std::optional<Rank1Filter> rank1;
        if (p.filter.width >= 2 && p.filter.height >= 2) rank1 = separate(p.filter);
        const cv::Mat kernel = taps_mat(p.filter.taps, p.filter.height, p.filter.width);
        cv::Mat along_x, along_y;
        if (rank1) {
            along_x = taps_mat(rank1->row, 1, p.filter.width);
            along_y = taps_mat(rank1->column, p.filter.height, 1);
        }
        RunTimings timings;
        for (int i = 0; i < options.warmup + options.repeat; ++i) {
            const auto start = std::chrono::steady_clock::now();
            if (rank1) {
                cv::sepFilter2D(src, dst, -1, along_x, along_y, anchor, p.delta, border);
            } else {
                cv::filter2D(src, dst, -1, kernel, anchor, p.delta, border);
            }
            const std::chrono::duration<double, std::milli> elapsed =
                std::chrono::steady_clock::now() - start;
            if (i >= options.warmup) timings.filter_ms.push_back(elapsed.count());
        }
        return timings;
    }
};

}  // namespace

std::unique_ptr<Backend> make_opencv_peer() { return std::make_unique<OpenCvPeer>(); }

}  // namespace cudaconv
