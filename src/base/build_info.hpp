#pragma once
// What this binary was built from, fixed when it was built: the one place
// that reads the header cmake/build_version.cmake writes, so that a new
// commit recompiles only build_info.cpp.
namespace cudaconv {

// `git describe --tags --always --dirty` of the source tree at build time
// ("0.2.0-12-gabcdef0"), the project's version before the commit where no
// tag is reachable ("0.1.0-gabcdef0"), or the project's version alone
// where the source was not a git checkout ("0.1.0").
const char* build_version();

// The CUDA architectures compiled in, as CMake names them, comma-separated
// ("75-real,80-real,90"): "NN" is machine code for sm_NN and PTX for
// compute_NN, "-real" the machine code only, "-virtual" the PTX only.
// Empty in a build without CUDA.
const char* build_cuda_architectures();

}  // namespace cudaconv
