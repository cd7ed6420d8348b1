#include "batch/filter_set.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "base/printable.hpp"
#include "core/chain.hpp"
#include "core/chain_compose.hpp"

namespace cudaconv {

FilterSet FilterSet::chain(std::vector<ConvParams> steps) {
    FilterSet set;
    set.filters_ = std::move(steps);
    set.composed_ = composed_rank1_chain(set.filters_);
    return set;
}

FilterSet FilterSet::bank(std::vector<ConvParams> filters, Combine how) {
    FilterSet set;
    set.filters_ = std::move(filters);
    set.combine_ = how;
    return set;
}

std::string FilterSet::label() const {
    if (!combine_) return chain_label(filters_);
    std::string label = std::string(combine_name(*combine_)) + ":";
    for (std::size_t i = 0; i < filters_.size(); ++i) {
        label += (i ? "," : "") + filters_[i].filter.label;
    }
    return label;
}

std::string FilterSet::part_name(std::size_t i) const {
    if (filters_.size() == 1) return "this job";
    return fmt::format("{} {} of the {} ({})", combine_ ? "filter" : "step", i + 1,
                       combine_ ? "bank" : "chain", printable_spec(filters_[i].filter.label));
}

Size2D FilterSet::output_size(std::int64_t width, std::int64_t height) const {
    if (filters_.empty()) return {width, height};
    return combine_ ? cudaconv::output_size(width, height, filters_.front())
                    : chain_output_size(width, height, filters_);
}

Size2D FilterSet::reach() const {
    Size2D reach{1, 1};
    for (const ConvParams& p : filters_) {
        if (combine_) {
            reach.width = std::max<std::int64_t>(reach.width, p.filter.width);
            reach.height = std::max<std::int64_t>(reach.height, p.filter.height);
        } else {
            reach.width += p.filter.width - 1;
            reach.height += p.filter.height - 1;
        }
    }
    return reach;
}

int FilterSet::filtered_channels(int channels) const {
    const bool keeps_alpha = !filters_.empty() && filters_.front().alpha == AlphaMode::keep;
    return channels == 4 && keeps_alpha ? 3 : channels;
}

int FilterSet::output_channels(int channels) const {
    if (!combine_) return channels;
    return combined_channels(*combine_, static_cast<int>(filters_.size()), channels,
                             filtered_channels(channels));
}

std::vector<Job> FilterSet::jobs(const ConstImageView& src, const ImageView& dst) const {
    if (!combine_) return chain_jobs(src, dst, filters_);
    std::vector<Job> jobs;
    for (const ConvParams& p : filters_) {
        // The input's channels: a stacked output holds them all.
        jobs.push_back({src, float32_view(dst.width, dst.height, src.channels), p});
    }
    return jobs;
}

std::optional<Job> FilterSet::one_filter_job(const ConstImageView& src,
                                             const ImageView& dst) const {
    if (!composed_) return std::nullopt;
    return cudaconv::one_filter_job(src, dst, *composed_);
}

}  // namespace cudaconv
