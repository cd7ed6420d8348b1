#include "filters/filter.hpp"

#include <algorithm>
#include <numeric>

namespace cudaconv {

double Filter::sum() const { return std::accumulate(taps.begin(), taps.end(), 0.0); }

Filter Filter::rotated_180() const {
    Filter out = *this;
    std::reverse(out.taps.begin(), out.taps.end());
    return out;
}

Filter Filter::normalized() const {
    Filter out = *this;
    const double s = sum();
    if (s != 0.0) {
        for (double& t : out.taps) t /= s;
    }
    return out;
}

}  // namespace cudaconv
