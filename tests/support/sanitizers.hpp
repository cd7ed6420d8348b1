#pragma once
// CUDACONV_TEST_UNDER_SANITIZER: this build runs under ASan, TSan or MSan,
// whose runtime maps terabytes of shadow memory, so that no address space
// limit (ulimit -v) leaves it room to start.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CUDACONV_TEST_UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define CUDACONV_TEST_UNDER_SANITIZER 1
#endif
#endif
