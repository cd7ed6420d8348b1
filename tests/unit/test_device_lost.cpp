// device_lost (kernels/runtime/cuda_host.hpp): which errors leave a device
// unusable, so that a batch on several devices gives its images to the
// others (batch/pipeline.hpp, DeviceLost); device_out_of_memory, on which a
// device's second GPU thread gives the device up; neither needs a device.
// And, on a device, that such a thread frees what it kept there.
#include <catch2/catch.hpp>

#include <new>
#include <stdexcept>

#include "io/image_io.hpp"
#include "kernels/runtime/cuda_check.hpp"
#include "kernels/runtime/cuda_host.hpp"
#include "support/random_image.hpp"
#include "support/skip_without_device.hpp"
#include "variants/registry.hpp"

namespace cudaconv::test {

TEST_CASE("device_lost: a CUDA error that stays with the context, no other", "[devices]") {
    for (const cudaError_t sticky :
         {cudaErrorIllegalAddress, cudaErrorLaunchFailure, cudaErrorECCUncorrectable,
          cudaErrorHardwareStackError, cudaErrorIllegalInstruction, cudaErrorMisalignedAddress,
          cudaErrorInvalidAddressSpace, cudaErrorInvalidPc, cudaErrorAssert}) {
        INFO(cudaGetErrorName(sticky));
        CHECK(device_lost(CudaError("a kernel", sticky)));
    }
    // The image's or the moment's: another image may run on the same device.
    for (const cudaError_t passing :
         {cudaErrorMemoryAllocation, cudaErrorInvalidValue, cudaErrorInvalidConfiguration}) {
        INFO(cudaGetErrorName(passing));
        CHECK_FALSE(device_lost(CudaError("a kernel", passing)));
    }
    // CudaError's default, which cuFFT's errors and cudaconv's own carry.
    CHECK_FALSE(device_lost(CudaError("cufftExecC2C")));
    CHECK_FALSE(device_lost(std::runtime_error("not CUDA's")));
}

TEST_CASE("device_out_of_memory: the device's memory running out, no other error", "[devices]") {
    CHECK(device_out_of_memory(CudaError("cudaMalloc", cudaErrorMemoryAllocation)));
    for (const cudaError_t other :
         {cudaErrorIllegalAddress, cudaErrorInvalidValue, cudaErrorLaunchFailure}) {
        INFO(cudaGetErrorName(other));
        CHECK_FALSE(device_out_of_memory(CudaError("a kernel", other)));
    }
    CHECK_FALSE(device_out_of_memory(CudaError("cufftExecC2C")));
    CHECK_FALSE(device_out_of_memory(std::bad_alloc()));  // the host's
}

// A batch's GPU thread that gives its device to the other thread there
// (an image ran out of device memory) frees what it kept on the device
// between runs: here a run's input and output buffers, 2 x 36 MB.
TEST_CASE("release_thread_device_memory frees what the thread kept on the device",
          "[gpu][concurrent]") {
    if (skip_without_device()) return;
    ConvParams params;
    params.filter = random_filter(5, 5, 900);
    params.anchor_x = params.anchor_y = 2;
    const cv::Mat src = random_image(4000, 3000, CV_8UC3, 901);
    cv::Mat out(src.rows, src.cols, src.type());
    const auto free_bytes = [] {
        std::size_t free = 0, total = 0;
        CUDA_CHECK(cudaMemGetInfo(&free, &total));
        return static_cast<double>(free);
    };
    Backend* fast = find_backend("fast");
    fast->run(Job{view_of(src), view_of(out), params}, {});
    const double kept = free_bytes();
    release_thread_device_memory();
    const double released = free_bytes();
    const double image_bytes = static_cast<double>(src.total() * src.elemSize());
    INFO("freed " << (released - kept) / 1e6 << " MB");
    CHECK(released - kept >= 1.9 * image_bytes);
    // The thread runs again, making its buffers anew.
    fast->run(Job{view_of(src), view_of(out), params}, {});
    CHECK(free_bytes() <= kept + 0.1 * image_bytes);
}

}  // namespace cudaconv::test
