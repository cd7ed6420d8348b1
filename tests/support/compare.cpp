#include "support/compare.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace cudaconv::test {
namespace {

bool is_integer_depth(int depth) { return depth == CV_8U || depth == CV_16U; }

// The level an exact value becomes in an integer output. Clamped before
// rounding because cv::saturate_cast<uchar>(double) goes through cvRound's
// int, which turns values beyond 2^31 into 0 rather than saturating them.
double to_integer_level(double exact, int depth) {
    if (std::isnan(exact)) return exact;  // kept, so that it fails below
    const double top = depth == CV_8U ? 255.0 : 65535.0;
    if (exact <= 0.0) return 0.0;
    if (exact >= top) return top;
    return static_cast<double>(cvRound(exact));  // half to even, like saturate_cast
}

double sample_error(double expected, double actual) {
    if (std::isnan(expected) || std::isnan(actual)) return std::numeric_limits<double>::infinity();
    if (expected == actual) return 0.0;  // equal infinities too
    return std::abs(actual - expected);
}

}  // namespace

std::string Comparison::describe() const {
    std::ostringstream os;
    os.precision(9);
    if (!problem.empty()) {
        os << "cannot compare: " << problem;
        return os.str();
    }
    os << (ok ? "match" : "MISMATCH") << ": " << failures << " of " << samples
       << " samples over tolerance " << tolerance;
    if (worst.x >= 0) {
        os << "; worst at (x=" << worst.x << ", y=" << worst.y << ", channel=" << worst.channel
           << "): expected " << worst.expected << ", actual " << worst.actual << ", |error| "
           << worst.error;
    }
    return os.str();
}

std::ostream& operator<<(std::ostream& os, const Comparison& c) { return os << c.describe(); }

Comparison compare_images(const cv::Mat& expected, const cv::Mat& actual,
                          const Tolerance& tolerance) {
    Comparison result;
    if (expected.size() != actual.size() || expected.channels() != actual.channels()) {
        std::ostringstream os;
        os << "expected " << expected.cols << "x" << expected.rows << "x" << expected.channels()
           << ", actual " << actual.cols << "x" << actual.rows << "x" << actual.channels();
        result.problem = os.str();
        return result;
    }
    const int out_depth = actual.depth();
    if (out_depth != CV_8U && out_depth != CV_16U && out_depth != CV_32F) {
        result.problem = "actual depth is not u8, u16 or f32";
        return result;
    }

    // Both in double: exact for every depth we compare, and ROIs are handled.
    cv::Mat e64, a64;
    expected.convertTo(e64, CV_64F);
    actual.convertTo(a64, CV_64F);
    const int channels = actual.channels();
    const bool integer_output = is_integer_depth(out_depth);
    if (integer_output) {
        for (int y = 0; y < e64.rows; ++y) {
            double* row = e64.ptr<double>(y);
            for (int i = 0; i < e64.cols * channels; ++i)
                row[i] = to_integer_level(row[i], out_depth);
        }
        result.tolerance = tolerance.integer_levels;
    } else {
        double largest = 0.0;
        for (int y = 0; y < e64.rows; ++y) {
            const double* row = e64.ptr<double>(y);
            for (int i = 0; i < e64.cols * channels; ++i) {
                if (std::isfinite(row[i])) largest = std::max(largest, std::abs(row[i]));
            }
        }
        result.tolerance = tolerance.float_relative * largest + tolerance.float_absolute;
    }

    for (int y = 0; y < e64.rows; ++y) {
        const double* e_row = e64.ptr<double>(y);
        const double* a_row = a64.ptr<double>(y);
        for (int x = 0; x < e64.cols; ++x) {
            for (int c = 0; c < channels; ++c) {
                const int i = x * channels + c;
                const double error = sample_error(e_row[i], a_row[i]);
                ++result.samples;
                if (error > result.tolerance) ++result.failures;
                if (result.worst.x < 0 || error > result.worst.error) {
                    result.worst = {x, y, c, e_row[i], a_row[i], error};
                }
            }
        }
    }
    result.ok = result.failures == 0;
    return result;
}

}  // namespace cudaconv::test
