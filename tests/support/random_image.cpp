#include "support/random_image.hpp"

#include <opencv2/core.hpp>

namespace cudaconv::test {

cv::Mat random_image(int width, int height, int cv_type, std::uint64_t seed) {
    cv::Mat m(height, width, cv_type);
    cv::RNG rng(seed);
    switch (CV_MAT_DEPTH(cv_type)) {
        case CV_8U: rng.fill(m, cv::RNG::UNIFORM, 0, 256); break;
        case CV_16U: rng.fill(m, cv::RNG::UNIFORM, 0, 65536); break;
        default: rng.fill(m, cv::RNG::UNIFORM, -1000.0, 1000.0); break;
    }
    return m;
}

Filter random_filter(int width, int height, std::uint64_t seed) {
    std::mt19937_64 gen(seed);
    std::uniform_real_distribution<double> tap(-1.0, 1.0);
    Filter f;
    f.width = width;
    f.height = height;
    f.label = "random";
    f.taps.resize(static_cast<std::size_t>(width) * height);
    for (double& t : f.taps) t = tap(gen);
    // Make sure the corner taps differ, so even a 2-tap filter is asymmetric.
    if (f.taps.size() > 1 && f.taps.front() == f.taps.back()) f.taps.front() += 0.5;
    return f;
}

}  // namespace cudaconv::test
