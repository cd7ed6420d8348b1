#pragma once
// What the -f options make of each image (docs/SPEC.md "Chains" and
// "Banks"): nothing (-f none), one filter, a chain of filters applied in
// turn (core/chain.hpp), or a bank of filters over the input whose
// responses --combine joins (core/bank.hpp). The sizes, channels, labels
// and jobs that follow from which it is, in one place.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/bank.hpp"
#include "core/job.hpp"

namespace cudaconv {

class FilterSet {
public:
    FilterSet() = default;  // -f none
    static FilterSet chain(std::vector<ConvParams> steps);
    static FilterSet bank(std::vector<ConvParams> filters, Combine how);

    bool none() const { return filters_.empty(); }
    // A chain's steps in order, or a bank's filters; one for one filter.
    const std::vector<ConvParams>& filters() const { return filters_; }
    std::size_t size() const { return filters_.size(); }
    std::optional<Combine> combine() const { return combine_; }
    bool is_bank() const { return combine_.has_value(); }
    bool is_stack() const { return combine_ == Combine::stack; }

    // For logs, --json and {filter}: a chain's steps joined by '+', a bank's
    // filters by ',' after how they combine ("magnitude:sobel-x,sobel-y").
    std::string label() const;
    // Filter i as messages name it: "this job" for one filter, else "step 2
    // of the chain (edge)" or "filter 2 of the bank (sobel-y)".
    std::string part_name(std::size_t i) const;

    // The output's size for an input of this size: after every step of a
    // chain; a bank's filters all leave the same (build_bank_params).
    Size2D output_size(std::int64_t width, std::int64_t height) const;
    // The input an output pixel depends on: a chain's filters' sizes added
    // up, less one a step; a bank's largest filter.
    Size2D reach() const;
    // The channels the filters change of an image of `channels`: all but a
    // kept alpha.
    int filtered_channels(int channels) const;
    // The output's channels for an input of `channels`: the same, or a
    // stacked bank's (combined_channels).
    int output_channels(int channels) const;

    // The jobs of one image from `src` to `dst`: a chain's steps
    // (chain_jobs), or a bank's filters, each from the input into a float32
    // response of the output's size and the input's channels, its view
    // without pixels (placed by whoever runs it).
    std::vector<Job> jobs(const ConstImageView& src, const ImageView& dst) const;

    // A chain whose steps equal one rank-1 filter (core/chain_compose.hpp):
    // that filter's job from `src` to `dst`, which a variant that runs
    // composed chains runs in the steps' place. None for any other chain,
    // one filter, or a bank.
    std::optional<Job> one_filter_job(const ConstImageView& src, const ImageView& dst) const;
    // That one filter's params, worked out once (composed_rank1_chain).
    const std::optional<ConvParams>& composed() const { return composed_; }

private:
    std::vector<ConvParams> filters_;
    std::optional<Combine> combine_;
    std::optional<ConvParams> composed_;  // a chain's one filter, worked out once
};

}  // namespace cudaconv
