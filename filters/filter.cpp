#include "filters/filter.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "filters/spec.hpp"

namespace cudaconv {
namespace {

std::string number(const char* format, double value) {
    char text[32];
    std::snprintf(text, sizeof text, format, value);
    return text;
}

// |value| as float32 holds it: rounded to the nearest float, infinite past
// the largest.
double float32_magnitude(double value) {
    const double m = std::abs(value);
    return m > FLT_MAX ? HUGE_VAL : static_cast<double>(static_cast<float>(m));
}

}  // namespace

double Filter::sum() const { return std::accumulate(taps.begin(), taps.end(), 0.0); }

Filter Filter::rotated_180() const {
    Filter out = *this;
    std::reverse(out.taps.begin(), out.taps.end());
    return out;
}

Filter Filter::normalized() const {
    Filter out = *this;
    double s = sum();
    if (!std::isfinite(s)) {
        // Taps near 1e308 overflow a double's sum. Divided by the largest
        // |tap| first, their shares of the sum are the same and it is finite.
        double largest = 0.0;
        for (const double t : taps) largest = std::max(largest, std::abs(t));
        for (double& t : out.taps) t /= largest;
        s = out.sum();
        if (s == 0.0) return *this;
    }
    if (s != 0.0) {
        for (double& t : out.taps) t /= s;
    }
    return out;
}

void check_float32_range(const Filter& f, double largest_sample, double scale, double delta,
                         const std::string& where) {
    // Decided on the values as the variants hold them, rounded to float32
    // (which may round up), and reported as given.
    double magnitude = 0.0;
    double float_magnitude = 0.0;
    for (const double t : f.taps) {
        magnitude += std::abs(t);
        float_magnitude += float32_magnitude(t);
    }
    const double taps_worst = magnitude * largest_sample;
    if (!(float_magnitude * largest_sample <= FLT_MAX)) {
        throw FilterError(where + ": the filter's taps overflow float32 (worst-case sum " +
                          number("%.2g", taps_worst) + ")");
    }
    const double worst = taps_worst * std::abs(scale) + std::abs(delta);
    if (!(float_magnitude * largest_sample * float32_magnitude(scale) + float32_magnitude(delta) <=
          FLT_MAX)) {
        throw FilterError(where + ": the output overflows float32 (worst-case sum " +
                          number("%.2g", worst) + ", scale " + number("%g", scale) + ", delta " +
                          number("%g", delta) + ")");
    }
}

}  // namespace cudaconv
