// base/process_exit.hpp: a command's request to end without the teardown,
// and CUDACONV_TEARDOWN, which refuses it for leak checkers. The ending
// itself (_exit) is main()'s; the CLI's GPU tests hold that a batch ended
// so leaves its outputs, JSON lines and exit code whole.
#include <catch2/catch.hpp>

#include "base/process_exit.hpp"
#include "support/scoped_env.hpp"

namespace cudaconv {
namespace {

TEST_CASE("process exit: CUDACONV_TEARDOWN keeps the teardown, else it is skipped", "[process]") {
    {
        const test::ScopedEnv teardown("CUDACONV_TEARDOWN", "1");
        CHECK_FALSE(skip_teardown_at_exit());
        CHECK_FALSE(teardown_skipped());
    }
    // Set but empty counts as not set, as NO_COLOR does.
    const test::ScopedEnv empty("CUDACONV_TEARDOWN", "");
    CHECK(skip_teardown_at_exit());
    CHECK(teardown_skipped());
}

}  // namespace
}  // namespace cudaconv
