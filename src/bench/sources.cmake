set(CUDACONV_BENCH_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/cases.cpp
  ${CMAKE_CURRENT_LIST_DIR}/random_data.cpp
  ${CMAKE_CURRENT_LIST_DIR}/reference.cpp
  ${CMAKE_CURRENT_LIST_DIR}/verify.cpp
  ${CMAKE_CURRENT_LIST_DIR}/runner.cpp
  ${CMAKE_CURRENT_LIST_DIR}/report.cpp
)
