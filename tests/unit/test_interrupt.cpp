// The signals' names, as the summary gives them.
#include <catch2/catch.hpp>

#include <signal.h>

#include "batch/interrupt.hpp"

namespace cudaconv {

TEST_CASE("signals are named as the summary names them", "[batch][signal]") {
    CHECK(signal_name(SIGINT) == "SIGINT");
    CHECK(signal_name(SIGHUP) == "SIGHUP");
    CHECK(signal_name(SIGTERM) == "SIGTERM");
}

}  // namespace cudaconv
