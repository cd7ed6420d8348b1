set(CUDACONV_BASE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/build_info.cpp
  ${CMAKE_CURRENT_LIST_DIR}/edit_distance.cpp
  ${CMAKE_CURRENT_LIST_DIR}/line_reader.cpp
  ${CMAKE_CURRENT_LIST_DIR}/printable.cpp
  ${CMAKE_CURRENT_LIST_DIR}/process_start.cpp
  ${CMAKE_CURRENT_LIST_DIR}/wrap.cpp
)
