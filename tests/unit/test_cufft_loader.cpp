// The cuFFT loader without a GPU: that libcufft opens and every function
// resolves where it is installed (the toolkit's own copy is tried by its
// path too), and that a missing or foreign library gives a reason the user
// can act on.
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "kernels/fft/cufft_loader.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

void check_usable(const cudaconv::CufftLibrary& library) {
    INFO("loaded " << library.path);
    CHECK(library.problem.empty());
    CHECK(library.version / 1000 == CUFFT_VER_MAJOR);
#define CUDACONV_CHECK_RESOLVED(name) CHECK(library.api->name != nullptr);
    CUDACONV_CUFFT_FUNCTIONS(CUDACONV_CHECK_RESOLVED)
#undef CUDACONV_CHECK_RESOLVED
    int version = 0;
    CHECK(library.api->cufftGetVersion(&version) == CUFFT_SUCCESS);
    CHECK(version == library.version);
}

}  // namespace

TEST_CASE("cuFFT loads with every function, or says why not", "[fft]") {
    const cudaconv::CufftLibrary& library = cudaconv::load_cufft();
    if (!library.api) {
        INFO("cuFFT is not found here: " << library.problem);
        CHECK_THAT(library.problem, StartsWith("cuFFT not found: ") && Contains("LD_LIBRARY_PATH"));
    } else {
        check_usable(library);
        CHECK(cudaconv::load_cufft().api == library.api);  // opened once
    }
    // The toolkit's own copy, where the build machine has it: the functions
    // cudaconv calls are all in the library the header describes.
    const std::string toolkit =
        "/usr/local/cuda/lib64/libcufft.so." + std::to_string(CUFFT_VER_MAJOR);
    if (std::filesystem::exists(toolkit)) check_usable(cudaconv::open_cufft({toolkit}));
}

TEST_CASE("a missing cuFFT names the file and LD_LIBRARY_PATH", "[fft]") {
    const cudaconv::CufftLibrary library =
        cudaconv::open_cufft({"libcufft_not_here.so.12", "libcufft_not_here.so"});
    CHECK(library.api == nullptr);
    CHECK_THAT(library.problem, StartsWith("cuFFT not found: libcufft_not_here.so.12: cannot "
                                           "open shared object file"));
    CHECK_THAT(library.problem, Contains("put that folder on LD_LIBRARY_PATH"));
}

TEST_CASE("a library without cuFFT's functions is refused by name", "[fft]") {
    // libm is on every glibc system and has none of them.
    const cudaconv::CufftLibrary library = cudaconv::open_cufft({"libm.so.6"});
    CHECK(library.api == nullptr);
    CHECK_THAT(library.problem, Contains("is not a cuFFT cudaconv can use: it lacks cufftCreate "
                                         "and 8 more functions"));
}
