set(CUDACONV_CPU_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/cpu_ref.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cpu_parallel.cpp
  ${CMAKE_CURRENT_LIST_DIR}/finish_row.cpp
)

# finish_row must give saturate_to(finish_value(...))'s results exactly: no
# fused multiply-add for scale * sum + delta in its AVX2 clone (GCC contracts
# by default), which would round differently from the multiply and add. Its
# clamps vectorise only as selects, which GCC makes only without trapping
# math (FP exception flags, which nothing here reads) and at -O3.
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/finish_row.cpp
  PROPERTIES COMPILE_OPTIONS "-ffp-contract=off;-fno-trapping-math;-O3")
