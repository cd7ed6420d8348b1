#pragma once
// Which variant's output every timed output of a case is checked against:
// the oracle where it takes seconds, the tested multi-threaded `cpu`
// variant beyond that.
#include <string>

#include "core/backend.hpp"

namespace cudaconv {

constexpr const char* kOracleName = "cpu-ref";
// The cpu variant's direct path, tested against cpu-ref: float32 sums
// every job, where `cpu` itself may take its FFT path.
constexpr const char* kTrustedCpuName = "cpu.direct";

// Above this many taps x output samples cpu-ref's double loops take more
// than a second or two (2e8 to 5e8 per second on one core of CI's
// machine), and a bench makes a reference per size x filter x depth.
constexpr double kMaxOracleTapSamples = 3e8;

// Taps times output pixels times filtered channels: the multiply-adds.
double tap_samples(const Job& job);

struct ReferenceChoice {
    Backend* backend = nullptr;
    bool exact = false;  // the oracle: only the variant's own error counts
    std::string why;     // for the log
};

// cpu-ref up to kMaxOracleTapSamples; beyond, `cpu` where it is registered
// and can run the job, else cpu-ref after all (slow, but right).
ReferenceChoice choose_reference(const Job& job);

}  // namespace cudaconv
