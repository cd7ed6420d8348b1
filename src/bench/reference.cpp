#include "bench/reference.hpp"

#include <fmt/format.h>

#include "variants/registry.hpp"

namespace cudaconv {

double tap_samples(const Job& job) {
    return static_cast<double>(job.params.filter.taps.size()) * static_cast<double>(job.dst.width) *
           static_cast<double>(job.dst.height) * job.filtered_channels();
}

ReferenceChoice choose_reference(const Job& job) {
    Backend* oracle = find_backend(kOracleName);
    const double work = tap_samples(job);
    if (work <= kMaxOracleTapSamples) {
        return {oracle, true, fmt::format("{:.2g} taps x samples", work)};
    }
    Backend* trusted = find_backend(kTrustedCpuName);
    if (trusted && trusted->can_run(job).ok) {
        return {trusted, false,
                fmt::format("{:.2g} taps x samples, over the oracle's {:.0e}", work,
                            kMaxOracleTapSamples)};
    }
    return {oracle, true,
            fmt::format("{:.2g} taps x samples, and no `{}` variant: this takes a while", work,
                        kTrustedCpuName)};
}

}  // namespace cudaconv
