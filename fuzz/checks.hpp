#pragma once
// What the fuzz targets hold every result to. A broken rule prints what
// broke and aborts, which libFuzzer (and the replay driver) report as a
// crash with the input that caused it.
#include <cstdio>
#include <cstdlib>
#include <string>

#define FUZZ_CHECK(condition, ...)                                                       \
    do {                                                                                 \
        if (!(condition)) {                                                              \
            std::fprintf(stderr, "fuzz check failed at %s:%d: %s: ", __FILE__, __LINE__, \
                         #condition);                                                    \
            std::fprintf(stderr, __VA_ARGS__);                                           \
            std::fputc('\n', stderr);                                                    \
            std::abort();                                                                \
        }                                                                                \
    } while (0)

namespace cudaconv::fuzz {

// An error is one line on stderr (common rule): a message with no line break
// of its own, whatever it quotes from the input.
inline void check_message(const std::string& message) {
    FUZZ_CHECK(!message.empty(), "an empty message");
    FUZZ_CHECK(message.find_first_of("\r\n") == std::string::npos, "a message of several lines: %s",
               message.c_str());
}

}  // namespace cudaconv::fuzz
