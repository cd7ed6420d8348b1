set(CUDACONV_CPU_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/cpu_ref.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cpu_parallel.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cpu_paths.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cpu_fft.cpp
  ${CMAKE_CURRENT_LIST_DIR}/conv_layer_cpu.cpp
  ${CMAKE_CURRENT_LIST_DIR}/finish_row.cpp
  ${CMAKE_CURRENT_LIST_DIR}/simd_rows.cpp
  ${CMAKE_CURRENT_LIST_DIR}/simd_int16.cpp
  ${CMAKE_CURRENT_LIST_DIR}/row_ring.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cpu_int16.cpp
)

# finish_row must give saturate_to(finish_value(...))'s results exactly: no
# fused multiply-add for scale * sum + delta in its AVX2 clone (GCC contracts
# by default), which would round differently from the multiply and add. Its
# clamps vectorise only as selects, which GCC makes only without trapping
# math (FP exception flags, which nothing here reads) and at -O3.
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/finish_row.cpp
  PROPERTIES COMPILE_OPTIONS "-ffp-contract=off;-fno-trapping-math;-O3")

# FFTW (double precision) runs the cpu variant's FFT path (cpu_fft.cpp):
# Debian's libfftw3-dev; its static library for the portable binaries.
find_path(CUDACONV_FFTW_INCLUDE_DIR fftw3.h REQUIRED)
if(CUDACONV_PORTABLE)
  find_library(CUDACONV_FFTW_DOUBLE_LIBRARY NAMES libfftw3.a REQUIRED)
else()
  find_library(CUDACONV_FFTW_DOUBLE_LIBRARY NAMES fftw3 REQUIRED)
endif()

# Highway (libhwy-dev) vectorises simd_rows.cpp for every x86 target, which
# picks one at run time. Its headers only: the binaries do not load
# libhwy.so (simd_rows.cpp says why); the unit tests do, to check the pick.
find_package(hwy REQUIRED)
