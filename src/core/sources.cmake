set(CUDACONV_CORE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/types.cpp
  ${CMAKE_CURRENT_LIST_DIR}/auto_select.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tolerance.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tuning.cpp
  ${CMAKE_CURRENT_LIST_DIR}/jpeg_settings.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fft_sizes.cpp
)
