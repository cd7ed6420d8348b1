#include "bench/random_data.hpp"

#include <random>

#include "io/image_io.hpp"

namespace cudaconv {
namespace {

// Distinct, fixed seeds per shape (splitmix64's finaliser spreads them).
std::uint64_t mix(std::uint64_t seed, std::uint64_t a, std::uint64_t b, std::uint64_t c) {
    std::uint64_t z = seed ^ (a * 0x9E3779B97F4A7C15ull) ^ (b << 20) ^ (c << 40);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

}  // namespace

cv::Mat random_bench_image(const BenchSize& size, Depth depth) {
    cv::Mat image(static_cast<int>(size.height), static_cast<int>(size.width),
                  cv_type_of(depth, size.channels));
    cv::RNG rng(mix(kBenchImageSeed, static_cast<std::uint64_t>(size.width),
                    static_cast<std::uint64_t>(size.height),
                    static_cast<std::uint64_t>(size.channels) * 8 + static_cast<int>(depth)));
    switch (depth) {
        case Depth::u8: rng.fill(image, cv::RNG::UNIFORM, 0, 256); break;
        case Depth::u16: rng.fill(image, cv::RNG::UNIFORM, 0, 65536); break;
        case Depth::f32: rng.fill(image, cv::RNG::UNIFORM, 0.0, 1.0); break;
    }
    return image;
}

Filter random_dense_filter(int width, int height) {
    std::mt19937_64 gen(mix(kBenchFilterSeed, static_cast<std::uint64_t>(width),
                            static_cast<std::uint64_t>(height), 0));
    std::uniform_real_distribution<double> tap(0.0, 1.0);
    Filter f;
    f.width = width;
    f.height = height;
    f.taps.resize(static_cast<std::size_t>(width) * static_cast<std::size_t>(height));
    double sum = 0.0;
    for (double& t : f.taps) sum += (t = tap(gen));
    if (sum > 0.0) {
        for (double& t : f.taps) t /= sum;
    } else {
        f.taps.assign(f.taps.size(), 1.0 / static_cast<double>(f.taps.size()));
    }
    f.label = height == width ? "random:" + std::to_string(width)
                              : "random:" + std::to_string(width) + "x" + std::to_string(height);
    return f;
}

}  // namespace cudaconv
