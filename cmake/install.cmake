# What `cmake --install` puts where, and the Debian package CPack makes of
# it (`cpack -G DEB` in a build folder): the binary, its man page (made
# from --help by help2man, where it is installed) and its bash and zsh
# completions.
include(GNUInstallDirs)
install(TARGETS cudaconv RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${PROJECT_SOURCE_DIR}/scripts/completions/cudaconv.bash
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME cudaconv)
install(FILES ${PROJECT_SOURCE_DIR}/scripts/completions/_cudaconv
        DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)

# The man page: --help and --version, with docs/man/cudaconv.h2m's
# sections (the commands, exit status, environment). Made by running the
# binary, so only where it runs here.
find_program(CUDACONV_HELP2MAN help2man)
if(CUDACONV_HELP2MAN AND NOT CMAKE_CROSSCOMPILING)
  set(CUDACONV_MAN_PAGE ${PROJECT_BINARY_DIR}/cudaconv.1)
  add_custom_command(
    OUTPUT ${CUDACONV_MAN_PAGE}.gz
    COMMAND ${CUDACONV_HELP2MAN} --no-info --section=1 --help-option=--help
            --version-option=--version
            --include=${PROJECT_SOURCE_DIR}/docs/man/cudaconv.h2m
            --output=${CUDACONV_MAN_PAGE} $<TARGET_FILE:cudaconv>
    DEPENDS cudaconv ${PROJECT_SOURCE_DIR}/docs/man/cudaconv.h2m
    COMMAND gzip -9nf ${CUDACONV_MAN_PAGE}
    COMMENT "cudaconv: the man page, from --help"
    VERBATIM)
  add_custom_target(cudaconv_man ALL DEPENDS ${CUDACONV_MAN_PAGE}.gz)
  install(FILES ${CUDACONV_MAN_PAGE}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
else()
  message(STATUS "cudaconv: no help2man, so no man page (apt-get install help2man)")
endif()

# The .deb: its dependencies from the libraries the binary links
# (dpkg-shlibdeps, from dpkg-dev), but for the CUDA toolkit's cuFFT, which
# no Debian package provides: a CUDA build's package needs the toolkit's
# libraries on the machine. The binary stripped.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME cudaconv)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_CONTACT "cudaconv maintainers")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION graphics)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_STRIP_FILES ON)
include(CPack)
