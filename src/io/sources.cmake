set(CUDACONV_IO_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/image_io.cpp
  ${CMAKE_CURRENT_LIST_DIR}/format_probe.cpp
  ${CMAKE_CURRENT_LIST_DIR}/probe_sizes.cpp
  ${CMAKE_CURRENT_LIST_DIR}/plausibility.cpp
  ${CMAKE_CURRENT_LIST_DIR}/decode_limits.cpp
  ${CMAKE_CURRENT_LIST_DIR}/memory_check.cpp
  ${CMAKE_CURRENT_LIST_DIR}/png_reader.cpp
  ${CMAKE_CURRENT_LIST_DIR}/codec_messages.cpp
  ${CMAKE_CURRENT_LIST_DIR}/output_formats.cpp
  ${CMAKE_CURRENT_LIST_DIR}/atomic_write.cpp
  ${CMAKE_CURRENT_LIST_DIR}/png_encoder.cpp
  ${CMAKE_CURRENT_LIST_DIR}/run_deflate.cpp
  ${CMAKE_CURRENT_LIST_DIR}/inputs.cpp
  ${CMAKE_CURRENT_LIST_DIR}/output_path.cpp
)

# libpng reads PNG (png_reader.cpp): Debian's libpng-dev; for the portable
# binaries its static library and zlib's, as OpenCV's static build links.
if(CUDACONV_PORTABLE)
  find_path(CUDACONV_PNG_INCLUDE_DIR png.h REQUIRED)
  find_library(CUDACONV_PNG_LIBRARY NAMES libpng16.a libpng.a REQUIRED)
  find_library(CUDACONV_ZLIB_LIBRARY NAMES libz.a REQUIRED)
  add_library(cudaconv::png INTERFACE IMPORTED)
  set_target_properties(cudaconv::png PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${CUDACONV_PNG_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${CUDACONV_PNG_LIBRARY};${CUDACONV_ZLIB_LIBRARY};m")
  set(CUDACONV_IO_LIBRARIES cudaconv::png)
else()
  find_package(PNG REQUIRED)
  set(CUDACONV_IO_LIBRARIES PNG::PNG)
endif()
