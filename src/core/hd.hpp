#pragma once
// Lets one definition serve the CPU reference and every CUDA kernel:
// host-only when compiled by the C++ compiler, host+device under nvcc.
#if defined(__CUDACC__)
#define CC_HD __host__ __device__ __forceinline__
#else
#define CC_HD inline
#endif

// `#pragma unroll` for device code in a definition the host compiler also
// reads (which would warn of a pragma it does not know).
#if defined(__CUDA_ARCH__)
#define CC_UNROLL _Pragma("unroll")
#else
#define CC_UNROLL
#endif
