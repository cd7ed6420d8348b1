#pragma once
// Lets one definition serve the CPU reference and every CUDA kernel:
// host-only when compiled by the C++ compiler, host+device under nvcc.
#if defined(__CUDACC__)
#define CC_HD __host__ __device__ __forceinline__
#else
#define CC_HD inline
#endif
