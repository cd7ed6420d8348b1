#pragma once
// What `cudaconv --version` prints: the facts (gathered once, from the
// build and from this machine) apart from their text (a pure function), so
// that the tests can give any facts, a build without CUDA's included.
#include <string>
#include <string_view>

namespace cudaconv {

// A library cudaconv opens at run time, as this machine has it.
enum class LibraryState {
    not_in_build,  // this build never loads it (built without CUDA, or its header)
    not_found,
    unusable,  // found, but not a version cudaconv can use
    usable,
};

struct LibraryFacts {
    LibraryState state = LibraryState::not_in_build;
    std::string version;  // "9.1.0"; empty where the library did not say
};

struct VersionFacts {
    std::string version;             // build_version(): "0.1.0-12-gabcdef0"
    bool with_cuda = false;          // built with the CUDA toolkit
    std::string cuda_runtime;        // linked in: "13.0"
    std::string cuda_driver;         // "12.8"; empty where there is no driver
    std::string cufft;               // as loaded: "12.0.0"
    LibraryFacts cudnn;              // found at run time
    LibraryFacts nvjpeg;             // found at run time
    std::string cuda_architectures;  // build_cuda_architectures(): "75-real,90"
    std::string opencv;              // "4.6.0"
    std::string exiv2;               // "0.27.6"; empty in a build without it
};

// CMake's list of CUDA architectures in the words of nvcc's output: machine
// code as sm_NN, PTX as compute_NN ("75-real,90" -> "sm_75 sm_90, PTX
// compute_90"); an empty list is a build without CUDA.
std::string cuda_architectures_text(std::string_view cmake_list);

// --version's lines, each within 80 columns, the first "cudaconv VERSION".
// No newline at the end (CLI11 adds it).
std::string version_text(const VersionFacts& facts);

// This binary's facts and this machine's libraries. Opens cuDNN and nvJPEG
// (a few milliseconds; the variants would open them anyway) and asks the
// driver its version without starting the CUDA runtime. Never throws for a
// missing library, driver or device.
VersionFacts gather_version_facts();

}  // namespace cudaconv
