# Writes OUTPUT, the header behind src/base/build_info.cpp: the version of
# the source tree being built and the CUDA architectures compiled in.
# Run as `cmake -P` at every build (CMakeLists.txt's cudaconv_build_version
# target), so a new commit or an edit shows in --version without a fresh
# configure; OUTPUT is rewritten only when its text changes, so an
# unchanged version recompiles nothing.
#
# Inputs (-D): SOURCE_DIR, OUTPUT, PROJECT_VERSION, CUDA_ARCHITECTURES
# (comma-separated, empty in a build without CUDA).
#
# The version is `git describe --tags --always --dirty` ("0.2.0-12-gabcdef0",
# a leading "v" dropped). Without a tag, describe gives only the commit, so
# the project's version goes before it ("0.1.0-gabcdef0-dirty"). Without git,
# or where SOURCE_DIR is not the top of a checkout (a release tarball, even
# one unpacked inside some other repository), the project's version alone.
set(version "${PROJECT_VERSION}")
find_program(GIT_EXECUTABLE git)
if(GIT_EXECUTABLE)
  execute_process(COMMAND "${GIT_EXECUTABLE}" rev-parse --show-toplevel
                  WORKING_DIRECTORY "${SOURCE_DIR}"
                  RESULT_VARIABLE toplevel_status OUTPUT_VARIABLE toplevel
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(toplevel_status EQUAL 0)
    file(REAL_PATH "${toplevel}" toplevel)
    file(REAL_PATH "${SOURCE_DIR}" source_dir)
  endif()
  if(toplevel_status EQUAL 0 AND toplevel STREQUAL source_dir)
    execute_process(COMMAND "${GIT_EXECUTABLE}" describe --tags --always --dirty
                    WORKING_DIRECTORY "${SOURCE_DIR}"
                    RESULT_VARIABLE describe_status OUTPUT_VARIABLE described
                    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(describe_status EQUAL 0 AND described MATCHES "^[0-9a-f]+(-dirty)?$")
      set(version "${PROJECT_VERSION}-g${described}")
    elseif(describe_status EQUAL 0 AND NOT described STREQUAL "")
      string(REGEX REPLACE "^v([0-9])" "\\1" version "${described}")
    endif()
  endif()
endif()

file(CONFIGURE OUTPUT "${OUTPUT}" CONTENT [[
// Written by cmake/build_version.cmake at each build; not to be edited.
#pragma once
#define CUDACONV_BUILD_VERSION "@version@"
#define CUDACONV_BUILD_CUDA_ARCHITECTURES "@CUDA_ARCHITECTURES@"
]] @ONLY)
