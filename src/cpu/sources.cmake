set(CUDACONV_CPU_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/cpu_ref.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cpu_parallel.cpp
)
