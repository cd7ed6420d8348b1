#pragma once
// The three kinds of failure and their exit codes (docs/SPEC.md), and work given
// up at the user's request. Library code throws; only main() catches, logs
// one line and returns the code.
#include <stdexcept>
#include <string>

namespace cudaconv {

constexpr int kExitOk = 0;
constexpr int kExitWorkFailed = 1;    // an input could not be read, filtered or written
constexpr int kExitUsage = 2;         // bad options, filter specs or variant choice
constexpr int kExitSignalBase = 128;  // + the signal that stopped a run, as the shell reports it

// A problem with the command line or the configuration: exit 2.
class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A problem with one piece of work (an input or an output): exit 1.
class WorkError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Work abandoned because the user asked to stop (Ctrl-C, SIGTERM) while it
// was under way: neither done nor failed, and nothing of it was written.
class Cancelled : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

}  // namespace cudaconv
