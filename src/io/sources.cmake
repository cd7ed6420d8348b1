set(CUDACONV_IO_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/image_io.cpp
  ${CMAKE_CURRENT_LIST_DIR}/format_probe.cpp
  ${CMAKE_CURRENT_LIST_DIR}/probe_sizes.cpp
  ${CMAKE_CURRENT_LIST_DIR}/plausibility.cpp
  ${CMAKE_CURRENT_LIST_DIR}/decode_limits.cpp
  ${CMAKE_CURRENT_LIST_DIR}/memory_check.cpp
  ${CMAKE_CURRENT_LIST_DIR}/codec_messages.cpp
  ${CMAKE_CURRENT_LIST_DIR}/output_formats.cpp
  ${CMAKE_CURRENT_LIST_DIR}/atomic_write.cpp
  ${CMAKE_CURRENT_LIST_DIR}/png_encoder.cpp
  ${CMAKE_CURRENT_LIST_DIR}/run_deflate.cpp
)

