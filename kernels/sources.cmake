if(CUDACONV_WITH_CUDA)
  set(CUDACONV_KERNEL_SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/runtime/cuda_host.cpp
    ${CMAKE_CURRENT_LIST_DIR}/runtime/device_info.cu
    ${CMAKE_CURRENT_LIST_DIR}/runtime/cuda_backend.cu
    ${CMAKE_CURRENT_LIST_DIR}/runtime/copy_bandwidth.cu
    ${CMAKE_CURRENT_LIST_DIR}/runtime/stream_hold.cu
    ${CMAKE_CURRENT_LIST_DIR}/codecs/png_deflate.cu
    ${CMAKE_CURRENT_LIST_DIR}/codecs/nvjpeg_loader.cpp
    ${CMAKE_CURRENT_LIST_DIR}/codecs/jpeg_decoder.cpp
    ${CMAKE_CURRENT_LIST_DIR}/ladder/naive.cu
    ${CMAKE_CURRENT_LIST_DIR}/ladder/cmem.cu
    ${CMAKE_CURRENT_LIST_DIR}/ladder/smem.cu
    ${CMAKE_CURRENT_LIST_DIR}/ladder/smem_cached.cu
    ${CMAKE_CURRENT_LIST_DIR}/ladder/unrolled.cu
    ${CMAKE_CURRENT_LIST_DIR}/ladder/separable.cu
    ${CMAKE_CURRENT_LIST_DIR}/fft/fft_sizes.cpp
    ${CMAKE_CURRENT_LIST_DIR}/fft/fft.cu
    ${CMAKE_CURRENT_LIST_DIR}/cudnn/cudnn_loader.cpp
    ${CMAKE_CURRENT_LIST_DIR}/cudnn/cudnn.cu
    ${CMAKE_CURRENT_LIST_DIR}/fast/fast_paths.cu
    ${CMAKE_CURRENT_LIST_DIR}/fast/fast.cu
    ${CMAKE_CURRENT_LIST_DIR}/fast/fast_strips.cu
    ${CMAKE_CURRENT_LIST_DIR}/fast/fast_registers.cu
    ${CMAKE_CURRENT_LIST_DIR}/fast/fast_registers_u8.cu
    ${CMAKE_CURRENT_LIST_DIR}/fast/dense_mma.cu
    ${CMAKE_CURRENT_LIST_DIR}/fast_separable/fast_separable.cu
    ${CMAKE_CURRENT_LIST_DIR}/fast_separable/separable_mma.cu
  )
else()
  # Without the toolkit: the fft variant's host arithmetic (its error bound,
  # unit-tested without a GPU), and one stand-in for everything else the
  # layers above call here.
  set(CUDACONV_KERNEL_SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/fft/fft_sizes.cpp
    ${CMAKE_CURRENT_LIST_DIR}/runtime/no_cuda.cpp
  )
endif()
