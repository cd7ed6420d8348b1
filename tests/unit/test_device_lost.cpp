// device_lost (kernels/runtime/cuda_host.hpp): which errors leave a device
// unusable, so that a batch on several devices gives its images to the
// others (batch/pipeline.hpp, DeviceLost). No device is needed.
#include <catch2/catch.hpp>

#include <new>
#include <stdexcept>

#include "kernels/runtime/cuda_check.hpp"
#include "kernels/runtime/cuda_host.hpp"

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

}  // namespace cudaconv::test
