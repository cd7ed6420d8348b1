#pragma once
// The CUDA runtime calls made outside the variants: page-locked host memory
// for a batch's uploads (src/batch/pinned_slots.cpp) and the device's
// context made ahead of the first run (src/batch/cuda_warmup.cpp). Here, so
// that src/ reaches CUDA only through kernels/, which a build without the
// CUDA toolkit replaces with kernels/runtime/no_cuda.cpp.
#include <cstddef>
#include <exception>

namespace cudaconv {

// `bytes` of page-locked host memory usable from every context, or nullptr
// where CUDA cannot lock it (the caller then keeps ordinary memory).
void* alloc_pinned(std::size_t bytes);
void free_pinned(void* data);

// Makes the device's primary context, with threads that wait for it
// sleeping rather than spinning. Best effort: a failure is cleared, and the
// variant's own run reports it; false says the context could not be made.
bool make_device_context(int device);

// Whether `error` is a CudaError whose code stays with the context (an
// illegal address, a failed launch, an uncorrectable ECC error, a device
// assert...): every later call on that device fails too, so the device can
// run no more images in this process.
bool device_lost(const std::exception& error);

// Whether `error` is a CudaError of the device's memory running out
// (cudaErrorMemoryAllocation), which leaves the context usable.
bool device_out_of_memory(const std::exception& error);

// Frees the device memory the calling thread keeps between runs (the run
// buffers, PNG rows, the JPEG encoder's and fft's state): for a batch's
// GPU thread that gives its device over to the other thread there.
void release_thread_device_memory();

// The device the calling thread's CUDA calls go to now (cudaGetDevice), or
// -1 where CUDA cannot say: what a handle made now is bound to
// (nvjpeg_handle.hpp), and for tests that a thread's work ran where its
// scope (device_scope.hpp) says.
int runtime_device();

}  // namespace cudaconv
