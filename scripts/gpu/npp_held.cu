// NPP timed as `cudaconv bench` times our CUDA rows by default (--timing
// device): the peer program ../shared/peers/npp_bench.cu as it is, with
// its event records wrapped so that each timed call is queued behind a
// held stream (kernels/runtime/stream_hold.hpp) and its events time the device
// alone. The peer's own build times each call as the host submits it, its
// launch latency included, as `cudaconv bench --timing launch` does.
// Built and run on the GPU machine by scripts/gpu/check.sh:
//   nvcc -O3 -std=c++17 -arch=sm_90 -I. -I<peers> scripts/gpu/npp_held.cu \
//     kernels/runtime/stream_hold.cu -lnppif -lnppisu -lnppc
#include <cuda_runtime.h>
#include <npp.h>
#include <nppi_filtering_functions.h>

#include <cstdio>
#include <cstdlib>

#include "kernels/runtime/stream_hold.hpp"
#include "scripts/gpu/standalone_cuda_error.hpp"

namespace {

void fail_if_timed_out();

cudaconv::StreamHold& hold() {
    static cudaconv::StreamHold h;
    static const bool checked_at_exit = std::atexit(fail_if_timed_out) == 0;
    static_cast<void>(checked_at_exit);
    return h;
}

// A timed call that waited on the device (and so on the hold) has no device
// time: said, not printed as one.
void fail_if_timed_out() {
    if (!hold().timed_out()) return;
    std::printf("NPP waited on the device while the stream was held: no device time\n");
    std::_Exit(1);
}

// The peer's timing loop records a start event, calls NPP and records a
// stop event, on the legacy default stream: the start is held, the stop
// releases the hold.
cudaError_t held_event_record(cudaEvent_t event) {
    static long records = 0;
    if (records++ % 2 == 0) {
        fail_if_timed_out();  // the call before
        hold().hold(0);
        return cudaEventRecord(event, 0);
    }
    const cudaError_t status = cudaEventRecord(event, 0);
    hold().release();
    return status;
}

}  // namespace

#define cudaEventRecord(event) held_event_record(event)
#include "npp_bench.cu"
