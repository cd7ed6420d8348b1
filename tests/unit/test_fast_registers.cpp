// fast's register path (kernels/fast_registers.cu), its host side: which
// jobs it takes and its block height. The GPU tests compare its outputs
// with cpu-ref; these need no device.
#include <catch2/catch.hpp>

#include <cstdint>
#include <utility>

#include "kernels/fast_registers.hpp"
#include "support/scoped_env.hpp"

namespace cudaconv::test {
namespace {

DeviceJob gray_f32_3x3(std::int64_t width, std::int64_t height) {
    DeviceJob job;
    job.src_width = job.dst_width = width;
    job.src_height = job.dst_height = height;
    job.channels = job.filtered_channels = 1;
    job.in_depth = Depth::f32;
    job.out_depth = Depth::f32;
    job.filter_width = job.filter_height = 3;
    job.origin_x = job.origin_y = -1;
    job.border = BorderMode::reflect101;
    return job;
}

}  // namespace

TEST_CASE("fast's register path: blocks of 4 rows as measured", "[strips]") {
    const ScopedEnv unset("CUDACONV_FAST_REGISTERS", nullptr);
    for (const auto& [w, h] : {std::pair{780, 585}, {2000, 1000}, {4000, 3000}, {8000, 6000}}) {
        CHECK(registers_block_rows(w, h) == 4);
    }
    {
        const ScopedEnv eight("CUDACONV_FAST_REGISTERS", "8");
        CHECK(registers_block_rows(4000, 3000) == 8);
    }
    {
        const ScopedEnv unknown("CUDACONV_FAST_REGISTERS", "3");  // not a height it has
        CHECK(registers_block_rows(4000, 3000) == 4);
    }
}

TEST_CASE("fast's register path: gray f32 3x3 only", "[strips]") {
    const ScopedEnv unset("CUDACONV_FAST_REGISTERS", nullptr);
    CHECK(registers_take(gray_f32_3x3(4000, 3000)));
    CHECK(registers_take(gray_f32_3x3(1, 1)));
    DeviceJob job = gray_f32_3x3(4000, 3000);
    job.out_depth = Depth::u8;
    CHECK(registers_take(job));  // any output depth
    job = gray_f32_3x3(4000, 3000);
    job.border = BorderMode::constant;
    CHECK(registers_take(job));
    // Everything else stays with the strip path (or the tile path).
    job = gray_f32_3x3(4000, 3000);
    job.in_depth = Depth::u8;
    CHECK_FALSE(registers_take(job));
    job = gray_f32_3x3(4000, 3000);
    job.channels = job.filtered_channels = 3;
    CHECK_FALSE(registers_take(job));
    job = gray_f32_3x3(4000, 3000);
    job.filter_width = job.filter_height = 5;
    job.origin_x = job.origin_y = -2;
    CHECK_FALSE(registers_take(job));
    job = gray_f32_3x3(4000, 3000);
    job.origin_x = 0;  // an anchor off the centre
    CHECK_FALSE(registers_take(job));
    job = gray_f32_3x3(4000, 3000);
    job.border = BorderMode::valid;
    CHECK_FALSE(registers_take(job));
    const ScopedEnv off("CUDACONV_FAST_REGISTERS", "0");
    CHECK_FALSE(registers_take(gray_f32_3x3(4000, 3000)));
}

}  // namespace cudaconv::test
