// A build without the CUDA toolkit (CUDACONV_WITH_CUDA=OFF), as a user meets
// it: the CUDA variants are still known by name and refuse every job, saying
// why, and everything the CPU does works as in any build.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "support/files.hpp"
#include "support/run_command.hpp"

namespace cudaconv::test {
namespace {

constexpr const char* kReason = "this build has no CUDA: built without the CUDA toolkit";
const std::vector<std::string> kCudaVariants = {"naive",
                                                "cmem",
                                                "smem",
                                                "smem-cached",
                                                "unrolled",
                                                "separable",
                                                "fft",
                                                "cudnn",
                                                "fast",
                                                "fast.registers",
                                                "fast.walk-u8",
                                                "fast.strips",
                                                "fast.tiles",
                                                "fast.mma",
                                                "fast.separable",
                                                "fast-separable",
                                                "fast-separable.mma",
                                                "fast-separable.strips"};

}  // namespace

TEST_CASE("without CUDA, a CUDA variant asked for by name is refused with the reason",
          "[cli][no-cuda]") {
    TempDir dir;
    for (const std::string& variant : kCudaVariants) {
        SECTION(variant) {
            const auto r = run_cudaconv(
                {sample("camera.png"), "-f", "edge", "-k", variant, "-o", "o.png"}, dir.path());
            INFO("stderr: " << r.err);
            CHECK(r.exit_code == 2);
            CHECK_THAT(r.err, Catch::Contains(variant) &&
                                  Catch::Contains(std::string("no CUDA device (") + kReason + ")"));
            CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
            CHECK(dir.entries().empty());
        }
    }
}

TEST_CASE("without CUDA, auto runs on the CPU", "[cli][no-cuda]") {
    TempDir dir;
    const auto r =
        run_cudaconv({sample("camera.png"), "-f", "edge", "-v", "-o", "o.png"}, dir.path());
    INFO("stderr: " << r.err);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.err, Catch::Contains("auto: cpu ("));
    CHECK(dir.entries() == std::vector<std::string>{"o.png"});
}

TEST_CASE("without CUDA, list, bench and --version show the CUDA variants refused",
          "[cli][no-cuda]") {
    const auto kernels = run_cudaconv({"list", "kernels"});
    CHECK(kernels.exit_code == 0);
    for (const std::string& variant : kCudaVariants) {
        CHECK_THAT(kernels.out, Catch::Contains(variant));
    }
    CHECK_THAT(kernels.out, Catch::Contains("built without the CUDA toolkit"));

    const auto devices = run_cudaconv({"list", "devices"});
    CHECK(devices.exit_code == 0);
    CHECK_THAT(devices.out, Catch::Contains(kReason));

    const auto bench = run_cudaconv({"bench", "--size", "64x48", "-f", "edge", "--depth", "u8",
                                     "-k", "all", "--repeat", "1", "--warmup", "0", "-q"});
    INFO("bench stdout: " << bench.out << "\nstderr: " << bench.err);
    CHECK(bench.exit_code == 0);
    CHECK_THAT(bench.out, Catch::Contains("refused") && Catch::Contains(kReason) &&
                              Catch::Contains("fast-separable"));

    const auto version = run_cudaconv({"--version"});
    CHECK(version.exit_code == 0);
    CHECK_THAT(version.out, Catch::Contains("CUDA runtime none, cuFFT none\n") &&
                                Catch::Contains("no CUDA (built without the toolkit)"));
}

}  // namespace cudaconv::test
