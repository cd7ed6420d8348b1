set(CUDACONV_IO_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/image_io.cpp
  ${CMAKE_CURRENT_LIST_DIR}/format_probe.cpp
  ${CMAKE_CURRENT_LIST_DIR}/exif_orientation.cpp
  ${CMAKE_CURRENT_LIST_DIR}/probe_sizes.cpp
  ${CMAKE_CURRENT_LIST_DIR}/plausibility.cpp
  ${CMAKE_CURRENT_LIST_DIR}/decode_limits.cpp
  ${CMAKE_CURRENT_LIST_DIR}/memory_check.cpp
  ${CMAKE_CURRENT_LIST_DIR}/png_reader.cpp
  ${CMAKE_CURRENT_LIST_DIR}/codec_messages.cpp
  ${CMAKE_CURRENT_LIST_DIR}/output_formats.cpp
  ${CMAKE_CURRENT_LIST_DIR}/atomic_write.cpp
  ${CMAKE_CURRENT_LIST_DIR}/made_folders.cpp
  ${CMAKE_CURRENT_LIST_DIR}/png_chunks.cpp
  ${CMAKE_CURRENT_LIST_DIR}/npy.cpp
  ${CMAKE_CURRENT_LIST_DIR}/layer_files.cpp
  ${CMAKE_CURRENT_LIST_DIR}/png_encoder.cpp
  ${CMAKE_CURRENT_LIST_DIR}/jpeg_fit.cpp
  ${CMAKE_CURRENT_LIST_DIR}/metadata.cpp
  ${CMAKE_CURRENT_LIST_DIR}/jpeg_writer.cpp
  ${CMAKE_CURRENT_LIST_DIR}/run_deflate.cpp
  ${CMAKE_CURRENT_LIST_DIR}/inputs.cpp
  ${CMAKE_CURRENT_LIST_DIR}/output_path.cpp
)

# libpng reads PNG (png_reader.cpp) and libjpeg writes JPEG (jpeg_writer.cpp):
# Debian's libpng-dev and libjpeg62-turbo-dev; for the portable binaries
# their static libraries and zlib's, as OpenCV's static build links.
if(CUDACONV_PORTABLE)
  find_path(CUDACONV_PNG_INCLUDE_DIR png.h REQUIRED)
  find_library(CUDACONV_PNG_LIBRARY NAMES libpng16.a libpng.a REQUIRED)
  find_library(CUDACONV_ZLIB_LIBRARY NAMES libz.a REQUIRED)
  find_path(CUDACONV_JPEG_INCLUDE_DIR jpeglib.h REQUIRED)
  find_library(CUDACONV_JPEG_LIBRARY NAMES libjpeg.a REQUIRED)
  add_library(cudaconv::codec_libraries INTERFACE IMPORTED)
  set_target_properties(cudaconv::codec_libraries PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${CUDACONV_PNG_INCLUDE_DIR};${CUDACONV_JPEG_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES
      "${CUDACONV_PNG_LIBRARY};${CUDACONV_JPEG_LIBRARY};${CUDACONV_ZLIB_LIBRARY};m")
  set(CUDACONV_IO_LIBRARIES cudaconv::codec_libraries)
else()
  find_package(PNG REQUIRED)
  find_package(JPEG REQUIRED)
  set(CUDACONV_IO_LIBRARIES PNG::PNG JPEG::JPEG)
endif()

# Exiv2 writes a TIFF output's metadata (tiff_metadata.cpp), found by its
# pkg-config file (Debian's libexiv2-dev); without it, tiff_metadata_none.cpp.
if(CUDACONV_WITH_EXIV2)
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(CUDACONV_EXIV2 REQUIRED IMPORTED_TARGET exiv2>=0.27)
  # Written and tested for 0.27 (Debian 12); 0.28 changed the calls it makes.
  if(CUDACONV_EXIV2_VERSION VERSION_GREATER_EQUAL 0.28)
    message(FATAL_ERROR "cudaconv: Exiv2 ${CUDACONV_EXIV2_VERSION} found; tiff_metadata.cpp is "
                        "written for 0.27 (or configure with -DCUDACONV_WITH_EXIV2=OFF)")
  endif()
  list(APPEND CUDACONV_IO_SOURCES ${CMAKE_CURRENT_LIST_DIR}/tiff_metadata.cpp)
  list(APPEND CUDACONV_IO_LIBRARIES PkgConfig::CUDACONV_EXIV2)
  message(STATUS "cudaconv: Exiv2 ${CUDACONV_EXIV2_VERSION}: TIFF outputs keep EXIF and ICC")
else()
  list(APPEND CUDACONV_IO_SOURCES ${CMAKE_CURRENT_LIST_DIR}/tiff_metadata_none.cpp)
  message(STATUS "cudaconv: CUDACONV_WITH_EXIV2 is OFF: TIFF outputs carry no metadata")
endif()
