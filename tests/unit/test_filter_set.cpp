// FilterSet (batch/filter_set.hpp): what one filter, a chain and a bank
// make of an image's size, channels and name.
#include <catch2/catch.hpp>

#include <vector>

#include "batch/filter_set.hpp"
#include "support/random_image.hpp"

namespace cudaconv::test {
namespace {

ConvParams step(int width, int height, const char* label, BorderMode border) {
    Filter f = random_filter(width, height, 1);
    f.label = label;
    ConvParams p = centred_params(f);
    p.border = border;
    return p;
}

}  // namespace

TEST_CASE("FilterSet: a chain's and a bank's sizes, channels and names") {
    const FilterSet none;
    CHECK(none.none());
    CHECK(none.output_size(10, 8).width == 10);

    const std::vector<ConvParams> filters{step(3, 3, "a", BorderMode::valid),
                                          step(5, 1, "b", BorderMode::valid)};
    const FilterSet chain = FilterSet::chain(filters);
    CHECK_FALSE(chain.is_bank());
    CHECK(chain.label() == "a+b");
    CHECK(chain.output_size(20, 10).width == 20 - 2 - 4);
    CHECK(chain.output_size(20, 10).height == 10 - 2);
    CHECK(chain.reach().width == 7);
    CHECK(chain.reach().height == 3);
    CHECK(chain.output_channels(4) == 4);
    CHECK(chain.filtered_channels(4) == 3);  // a kept alpha
    CHECK(chain.part_name(1) == "step 2 of the chain (b)");

    const std::vector<ConvParams> same{step(3, 3, "x", BorderMode::reflect101),
                                       step(3, 3, "y", BorderMode::reflect101)};
    const FilterSet stack = FilterSet::bank(same, Combine::stack);
    CHECK(stack.is_stack());
    CHECK(stack.label() == "stack:x,y");
    CHECK(stack.output_size(20, 10).width == 20);
    CHECK(stack.reach().width == 3);
    CHECK(stack.output_channels(4) == 2 * 3 + 1);
    CHECK(stack.output_channels(1) == 2);
    CHECK(stack.part_name(0) == "filter 1 of the bank (x)");
    CHECK(FilterSet::bank(same, Combine::max).output_channels(3) == 3);
    CHECK(FilterSet::chain({same.front()}).part_name(0) == "this job");

    // A bank's jobs: each from the input into a float32 response of the
    // input's channels, without pixels.
    const cv::Mat src(10, 20, CV_8UC4);
    cv::Mat dst(10, 20, CV_32FC(7));
    ConstImageView in{reinterpret_cast<const std::byte*>(src.data), 20, 10, 4, Depth::u8, 80};
    ImageView out{reinterpret_cast<std::byte*>(dst.data), 20, 10, 7, Depth::f32, 20 * 7 * 4};
    const std::vector<Job> jobs = stack.jobs(in, out);
    REQUIRE(jobs.size() == 2);
    CHECK(jobs[1].dst.channels == 4);
    CHECK(jobs[1].dst.depth == Depth::f32);
    CHECK(jobs[1].dst.data == nullptr);
    CHECK(jobs[1].src.data == in.data);
}

}  // namespace cudaconv::test
