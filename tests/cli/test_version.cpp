// `cudaconv --version` as a user runs it: "cudaconv VERSION" first, then the
// CUDA runtime, driver and cuFFT, cuDNN and nvJPEG as this machine has them
// (missing ones said, never an error), the GPU architectures compiled in
// and OpenCV and Exiv2 (or that it is not built in), each line within 80
// columns, in a build with CUDA or without.
#include <catch2/catch.hpp>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "base/build_info.hpp"
#include "support/run_command.hpp"

namespace cudaconv::test {

TEST_CASE(
    "version: --version prints the build's version first, then the libraries and architectures",
    "[cli][version]") {
    const auto r = run_cudaconv({"--version"});
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.err.empty());

    std::vector<std::string> lines;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    REQUIRE(lines.size() >= 5);
    // git describe's form ("0.1.0-123-gabcdef0", "-dirty" after edits), or
    // the project's version alone outside a git checkout.
    CHECK(std::regex_match(lines[0], std::regex(R"(cudaconv \d+\.\d+\.\d+(-[0-9A-Za-z.]+)*)")));
    CHECK(lines[0] == std::string("cudaconv ") + build_version());
    for (const std::string& line : lines) CHECK(line.size() <= 80);

    CHECK(std::regex_search(r.out, std::regex(R"(\nCUDA runtime (\d+\.\d+|none), )")));
    CHECK(std::regex_search(r.out, std::regex(R"(cuFFT (\d+\.\d+\.\d+|none)\n)")));
    const std::string library = R"((\d+\.\d+\.\d+|none|not found|(\d+\.\d+\.\d+ )?\(unusable\)))";
    CHECK(std::regex_search(
        r.out, std::regex("\nFound at run time: cuDNN " + library + ", nvJPEG " + library + "\n")));
    // Exiv2's version where the build has it (TIFF outputs' metadata).
    const std::string exiv2 = CUDACONV_WITH_EXIV2 ? R"(\d+\.\d+\.\d+)"
                                                  : R"(none \(TIFF outputs carry no metadata\))";
    CHECK(std::regex_search(r.out, std::regex(R"(\nOpenCV \d+\.\d+\.\d+, Exiv2 )" + exiv2 + "\n")));

    const std::string architectures = build_cuda_architectures();
    if (architectures.empty()) {  // built without the toolkit
        CHECK_THAT(r.out, Catch::Contains("CUDA runtime none, cuFFT none\n"));
        CHECK_THAT(r.out, Catch::Contains("cuDNN none, nvJPEG none\n"));
        CHECK_THAT(r.out,
                   Catch::Contains("\nGPU architectures: no CUDA (built without the toolkit)\n"));
    } else {
        // The driver's version, or that there is none: never a failure.
        CHECK(std::regex_search(r.out, std::regex(R"(, (driver \d+\.\d+|no CUDA driver), )")));
        CHECK(std::regex_search(r.out, std::regex(R"(\nGPU architectures: (sm_|PTX compute_))")));
    }
}

}  // namespace cudaconv::test
