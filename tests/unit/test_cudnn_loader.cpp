// The cuDNN loader without a GPU: that libcudnn opens and every function
// resolves when it is installed, that each way it can be unusable gives a
// reason the user can act on, and that CUDNN_CHECK names the call and place.
// Nothing here needs cuDNN to be present: without it, the reasons are checked.
#include <string>

#include <catch2/catch.hpp>

#include "kernels/runtime/cuda_check.hpp"
#include "kernels/cudnn/cudnn_loader.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

TEST_CASE("cuDNN 9 loads with every function, or says why not", "[cudnn]") {
    const cudaconv::CudnnLibrary& library = cudaconv::load_cudnn();
    if (!library.api) {
        INFO("cuDNN is not usable here: " << library.problem);
        CHECK_FALSE(library.problem.empty());
        CHECK_THAT(library.problem, Contains("LD_LIBRARY_PATH") || Contains("cuDNN 9") ||
                                        Contains("built without cuDNN headers") ||
                                        Contains("is missing beside it"));
        return;
    }
#if CUDACONV_HAVE_CUDNN
    INFO("loaded " << library.path);
    CHECK(library.problem.empty());
    CHECK(library.version >= 90000);
    CHECK(library.version < 100000);
    CHECK(static_cast<long>(library.api->cudnnGetVersion()) == library.version);
#define CUDACONV_CHECK_RESOLVED(name) CHECK(library.api->name != nullptr);
    CUDACONV_CUDNN_FUNCTIONS(CUDACONV_CHECK_RESOLVED)
#undef CUDACONV_CHECK_RESOLVED
    CHECK(std::string(library.api->cudnnGetErrorString(CUDNN_STATUS_BAD_PARAM)) ==
          "CUDNN_STATUS_BAD_PARAM");
    // The same table on every call: the library is opened once.
    CHECK(cudaconv::load_cudnn().api == library.api);
#endif
}

TEST_CASE("a missing cuDNN names the file and LD_LIBRARY_PATH", "[cudnn]") {
    const cudaconv::CudnnLibrary library =
        cudaconv::open_cudnn({"libcudnn_not_here.so.9", "libcudnn_not_here.so"});
    CHECK(library.api == nullptr);
#if CUDACONV_HAVE_CUDNN
    // The first name's error: the soname a user would look for.
    CHECK_THAT(library.problem, StartsWith("cuDNN 9 not found: libcudnn_not_here.so.9: cannot "
                                           "open shared object file"));
    CHECK_THAT(library.problem, Contains("; put its folder on LD_LIBRARY_PATH"));
#else
    CHECK(library.problem == "built without cuDNN headers (cudnn.h was not found at build time)");
#endif
}

#if CUDACONV_HAVE_CUDNN
TEST_CASE("a library without cuDNN's functions is refused by name", "[cudnn]") {
    // libm is on every glibc system and has none of them.
    const cudaconv::CudnnLibrary library = cudaconv::open_cudnn({"libm.so.6"});
    CHECK(library.api == nullptr);
    CHECK_THAT(library.problem,
               StartsWith("libm.so.6 is not cuDNN 9: it lacks cudnnGetVersion and "));
    CHECK_THAT(library.problem, Contains("more functions"));
}

TEST_CASE("CUDNN_CHECK throws with the call, file:line and cuDNN's message", "[cudnn]") {
    const auto failing_call = [] { return CUDNN_STATUS_BAD_PARAM; };
    const auto succeeding_call = [] { return CUDNN_STATUS_SUCCESS; };
    CHECK_NOTHROW([&] { CUDNN_CHECK(succeeding_call()); }());
    try {
        CUDNN_CHECK(failing_call());
        FAIL("CUDNN_CHECK did not throw");
    } catch (const cudaconv::CudaError& e) {
        const std::string message = e.what();
        CHECK_THAT(message, StartsWith("cuDNN error in failing_call() at "));
        CHECK_THAT(message, Contains("test_cudnn_loader.cpp:"));
        if (cudaconv::load_cudnn().api) {
            CHECK_THAT(message, Contains(": CUDNN_STATUS_BAD_PARAM"));
        } else {
            CHECK_THAT(message, Contains(": status 2000"));  // CUDNN_STATUS_BAD_PARAM's value
        }
    }
}
#endif
