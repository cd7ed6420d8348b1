// Which jobs fast-separable's tensor-core path takes (kernels/separable_mma.cu).
// The GPU tests compare its outputs with cpu-ref, but the CUDA-core path
// would pass them too had the tensor-core path refused: this holds the
// choice itself. Host code only; no device needed.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <optional>
#include <string>

#include "filters/gaussian.hpp"
#include "filters/named.hpp"
#include "kernels/separable_mma.hpp"

namespace cudaconv::test {
namespace {

// CUDACONV_FAST_SEPARABLE_MMA set (or unset) for one scope.
class MmaSetting {
public:
    explicit MmaSetting(const char* value) {
        if (const char* before = std::getenv(kName)) before_ = before;
        if (value) {
            setenv(kName, value, 1);
        } else {
            unsetenv(kName);
        }
    }
    MmaSetting(const MmaSetting&) = delete;
    MmaSetting& operator=(const MmaSetting&) = delete;
    ~MmaSetting() {
        if (before_) {
            setenv(kName, before_->c_str(), 1);
        } else {
            unsetenv(kName);
        }
    }

private:
    static constexpr const char* kName = "CUDACONV_FAST_SEPARABLE_MMA";
    std::optional<std::string> before_;
};

struct MmaCase {
    Job job;
    DeviceJob device;
};

// A 4000x3000 RGB u8 image under `filter`, centred, reflect101.
MmaCase rgb_u8(const Filter& filter) {
    MmaCase c;
    c.job.params.filter = filter;
    c.job.params.anchor_x = filter.width / 2;
    c.job.params.anchor_y = filter.height / 2;
    DeviceJob& d = c.device;
    d.src_width = d.dst_width = 4000;
    d.src_height = d.dst_height = 3000;
    d.channels = d.filtered_channels = 3;
    d.in_depth = d.out_depth = Depth::u8;
    d.filter_width = filter.width;
    d.filter_height = filter.height;
    d.origin_x = -(filter.width / 2);
    d.origin_y = -(filter.height / 2);
    return c;
}

bool takes(const MmaCase& c) { return mma_take(c.job, c.device); }

}  // namespace

TEST_CASE("tensor-core path: the jobs it takes by default", "[separable-mma]") {
    const MmaSetting unset(nullptr);
    const Filter sigma5 = gaussian_filter(31, 5.0);
    CHECK(takes(rgb_u8(sigma5)));
    CHECK(takes(rgb_u8(gaussian_filter(3, 0.0))));
    CHECK(takes(rgb_u8(*make_named_filter("sobel-x"))));
    // Sides up to 33 (three blocks of 16 taps a pass).
    CHECK(takes(rgb_u8(gaussian_filter(33, 0.0))));
    CHECK_FALSE(takes(rgb_u8(gaussian_filter(35, 0.0))));

    MmaCase gray = rgb_u8(sigma5);
    gray.device.channels = gray.device.filtered_channels = 1;
    CHECK(takes(gray));
    MmaCase alpha = rgb_u8(sigma5);
    alpha.device.channels = 4;
    CHECK(takes(alpha));

    // Only u8 samples are exact in fp16.
    for (Depth in : {Depth::u16, Depth::f32}) {
        MmaCase c = rgb_u8(sigma5);
        c.device.in_depth = in;
        CHECK_FALSE(takes(c));
    }
    // A constant border must be a whole u8 too.
    MmaCase border = rgb_u8(sigma5);
    border.device.border = BorderMode::constant;
    border.device.border_value = 17.0f;
    CHECK(takes(border));
    border.device.border_value = 17.5f;
    CHECK_FALSE(takes(border));
    border.device.border_value = 256.0f;
    CHECK_FALSE(takes(border));

    MmaCase valid = rgb_u8(sigma5);
    valid.device.border = BorderMode::valid;
    CHECK_FALSE(takes(valid));
    MmaCase off_centre = rgb_u8(sigma5);
    off_centre.device.origin_x = 0;
    CHECK_FALSE(takes(off_centre));
    // Not rank 1.
    CHECK_FALSE(takes(rgb_u8(*make_named_filter("emboss"))));
}

TEST_CASE("tensor-core path: CUDACONV_FAST_SEPARABLE_MMA=0 turns it off", "[separable-mma]") {
    const MmaCase small = rgb_u8(gaussian_filter(3, 0.0));
    const MmaCase large = rgb_u8(gaussian_filter(31, 5.0));
    {
        const MmaSetting off("0");
        CHECK_FALSE(takes(small));
        CHECK_FALSE(takes(large));
    }
    {
        const MmaSetting on("1");
        CHECK(takes(small));
        CHECK(takes(large));
        MmaCase f32 = large;
        f32.device.in_depth = Depth::f32;
        CHECK_FALSE(takes(f32));  // asking for it does not widen what it can run
    }
}

}  // namespace cudaconv::test
