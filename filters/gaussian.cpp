#include "filters/gaussian.hpp"

#include <cmath>
#include <cstddef>

namespace cudaconv {

namespace {

// cv::getGaussianKernel returns these for sigma <= 0 instead of sampling
// the Gaussian (OpenCV 4.x, imgproc/src/smooth.dispatch.cpp). All are
// exact in binary, so writing them as fractions is exact too.
const std::vector<double>* fixed_table(int n) {
    static const std::vector<double> k1 = {1.0};
    static const std::vector<double> k3 = {0.25, 0.5, 0.25};
    static const std::vector<double> k5 = {1 / 16.0, 4 / 16.0, 6 / 16.0, 4 / 16.0, 1 / 16.0};
    static const std::vector<double> k7 = {1 / 32.0, 7 / 64.0, 7 / 32.0, 9 / 32.0,
                                           7 / 32.0, 7 / 64.0, 1 / 32.0};
    static const std::vector<double> k9 = {4 / 256.0,  13 / 256.0, 30 / 256.0,
                                           51 / 256.0, 60 / 256.0, 51 / 256.0,
                                           30 / 256.0, 13 / 256.0, 4 / 256.0};
    switch (n) {
        case 1: return &k1;
        case 3: return &k3;
        case 5: return &k5;
        case 7: return &k7;
        case 9: return &k9;
        default: return nullptr;
    }
}

}  // namespace

double gaussian_sigma_for_size(int n) {
    // OpenCV evaluates 0.3((n-1)/2 - 1) + 0.8 as the fused n*0.15 + 0.35;
    // std::fma rounds once, as its softfloat mulAdd does, so the taps match
    // to the last bit.
    return std::fma(static_cast<double>(n), 0.15, 0.35);
}

double gaussian_size_for_sigma(double sigma) {
    // nearbyint in the default rounding mode is cvRound: half to even.
    const double n = std::nearbyint(sigma * 6 + 1);
    return std::fmod(n, 2.0) == 0.0 ? n + 1 : n;  // "| 1" on a double
}

std::vector<double> gaussian_kernel_1d(int n, double sigma) {
    if (sigma <= 0) {
        if (const std::vector<double>* table = fixed_table(n)) return *table;
    }
    // The same operations in the same order as OpenCV's bit-exact version,
    // so rounding agrees: x runs over doubled offsets (x = 2i - (n-1)) and
    // the -1/2 of the exponent becomes -1/8 to compensate.
    const double s = sigma > 0 ? sigma : gaussian_sigma_for_size(n);
    const double scale = -0.125 / (s * s);
    const int half = (n - 1) / 2;
    std::vector<double> values(static_cast<std::size_t>(half));
    double sum = 0.0;
    for (int i = 0, x = 1 - n; i < half; ++i, x += 2) {
        values[static_cast<std::size_t>(i)] = std::exp(static_cast<double>(x * x) * scale);
        sum += values[static_cast<std::size_t>(i)];
    }
    sum *= 2;
    sum += 1.0;  // the centre tap, exp(0)
    if (n % 2 == 0) sum += 1.0;
    const double inv_sum = 1.0 / sum;

    std::vector<double> taps(static_cast<std::size_t>(n));
    for (int i = 0; i < half; ++i) {
        const double t = values[static_cast<std::size_t>(i)] * inv_sum;
        taps[static_cast<std::size_t>(i)] = t;
        taps[static_cast<std::size_t>(n - 1 - i)] = t;
    }
    taps[static_cast<std::size_t>(half)] = inv_sum;
    if (n % 2 == 0) taps[static_cast<std::size_t>(half + 1)] = inv_sum;
    return taps;
}

Filter gaussian_filter(int n, double sigma) {
    const std::vector<double> k = gaussian_kernel_1d(n, sigma);
    Filter f;
    f.width = n;
    f.height = n;
    f.taps.reserve(k.size() * k.size());
    for (double column_tap : k) {
        for (double row_tap : k) f.taps.push_back(column_tap * row_tap);
    }
    return f;
}

}  // namespace cudaconv
