// --version's text from given facts: the architectures in nvcc's words,
// each library's state, Exiv2's version or its absence, and every line
// within 80 columns.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "cli/version.hpp"

namespace cudaconv {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

VersionFacts cuda_build() {
    VersionFacts facts;
    facts.version = "0.1.0-123-gabcdef0";
    facts.with_cuda = true;
    facts.cuda_runtime = "13.0";
    facts.cuda_driver = "12.8";
    facts.cufft = "12.0.0";
    facts.cudnn = {LibraryState::usable, "9.13.0"};
    facts.nvjpeg = {LibraryState::not_found, ""};
    facts.cuda_architectures = "90";
    facts.opencv = "4.6.0";
    facts.exiv2 = "0.27.6";
    return facts;
}

}  // namespace

TEST_CASE("version: CMake's architectures as machine code and PTX", "[version]") {
    CHECK(cuda_architectures_text("90") == "sm_90, PTX compute_90");
    CHECK(cuda_architectures_text("75-real,80-real,86-real,90") ==
          "sm_75 sm_80 sm_86 sm_90, PTX compute_90");
    CHECK(cuda_architectures_text("90a-real") == "sm_90a");
    CHECK(cuda_architectures_text("80-real,90-virtual") == "sm_80, PTX compute_90");
    CHECK(cuda_architectures_text("90-virtual") == "PTX compute_90");
    CHECK(cuda_architectures_text("native") == "native");
    CHECK(cuda_architectures_text("") == "no CUDA (built without the toolkit)");
}

TEST_CASE("version: a CUDA build's lines", "[version]") {
    CHECK(version_text(cuda_build()) == "cudaconv 0.1.0-123-gabcdef0\n"
                                        "CUDA runtime 13.0, driver 12.8, cuFFT 12.0.0\n"
                                        "Found at run time: cuDNN 9.13.0, nvJPEG not found\n"
                                        "GPU architectures: sm_90, PTX compute_90\n"
                                        "OpenCV 4.6.0, Exiv2 0.27.6");

    VersionFacts no_driver = cuda_build();
    no_driver.cuda_driver.clear();
    no_driver.cudnn = {LibraryState::unusable, "8.9.7"};
    no_driver.nvjpeg = {LibraryState::usable, "13.0.0"};
    const auto lines = lines_of(version_text(no_driver));
    REQUIRE(lines.size() == 5);
    CHECK(lines[1] == "CUDA runtime 13.0, no CUDA driver, cuFFT 12.0.0");
    CHECK(lines[2] == "Found at run time: cuDNN 8.9.7 (unusable), nvJPEG 13.0.0");

    no_driver.cudnn = {LibraryState::unusable, ""};
    CHECK(lines_of(version_text(no_driver))[2] ==
          "Found at run time: cuDNN (unusable), nvJPEG 13.0.0");
}

TEST_CASE("version: a build without CUDA's lines", "[version]") {
    VersionFacts facts;
    facts.version = "0.1.0";
    facts.cuda_runtime = "none";
    facts.cufft = "none";
    facts.opencv = "4.6.0";
    CHECK(version_text(facts) == "cudaconv 0.1.0\n"
                                 "CUDA runtime none, cuFFT none\n"
                                 "Found at run time: cuDNN none, nvJPEG none\n"
                                 "GPU architectures: no CUDA (built without the toolkit)\n"
                                 "OpenCV 4.6.0, Exiv2 none (TIFF outputs carry no metadata)");
}

TEST_CASE("version: every line within 80 columns, however many architectures", "[version]") {
    VersionFacts facts = cuda_build();
    // CMake 3.25's "all" for CUDA 12.
    facts.cuda_architectures =
        "35-real,37-real,50-real,52-real,53-real,60-real,61-real,62-real,70-real,72-real,"
        "75-real,80-real,86-real,87-real,89-real,90";
    facts.cudnn = {LibraryState::unusable, "8.9.7"};
    facts.nvjpeg = {LibraryState::unusable, ""};
    const std::string text = version_text(facts);
    INFO(text);
    const auto lines = lines_of(text);
    CHECK(lines.size() == 6);  // the architectures take two
    for (const std::string& line : lines) CHECK(line.size() <= 80);
    CHECK(lines[4].rfind("                   sm_", 0) == 0);  // under the list's start
    CHECK(lines[4].find("PTX compute_90") != std::string::npos);
}

}  // namespace cudaconv
