#pragma once
// Timing the device's work alone. Events recorded around a launch on an
// idle device also time the host: the start event is stamped as soon as the
// host submits it, and the kernel starts only once the host has gone
// through the launch call: 3-4 us more on the H100 machine, for our
// kernels and NPP's alike (docs/PERFORMANCE.md, "Timing"). So a
// timed run is queued behind a kernel that holds
// the stream until the host has queued the start event, the launch and the
// stop event, and then releases it (nvbench's "blocking kernel").
#include <cuda_runtime.h>

namespace cudaconv {

class StreamHold {
public:
    StreamHold();
    ~StreamHold();
    StreamHold(const StreamHold&) = delete;
    StreamHold& operator=(const StreamHold&) = delete;

    // Queues the holding kernel on `stream`: nothing queued after it starts
    // until release(), or until a second has passed.
    void hold(cudaStream_t stream);
    void release();
    // Once the stream has passed the hold: whether it gave up waiting
    // instead of being released. The work queued behind it then waited on
    // the device itself (a synchronising call inside a launch), and its
    // time includes the host's.
    bool timed_out() const;

private:
    // Page-locked and mapped: [0] the host's release, [1] the kernel's
    // time-out mark; and their address on the device, asked for once.
    volatile int* flags_ = nullptr;
    volatile int* device_flags_ = nullptr;
};

// Releases a StreamHold when it leaves scope, a launch that throws
// included: the stream never waits out the hold's second.
class HeldStream {
public:
    HeldStream(StreamHold& hold, cudaStream_t stream) : hold_(hold) { hold_.hold(stream); }
    ~HeldStream() { hold_.release(); }
    HeldStream(const HeldStream&) = delete;
    HeldStream& operator=(const HeldStream&) = delete;

private:
    StreamHold& hold_;
};

}  // namespace cudaconv
