# The fuzz targets, one per parser or writer, each fuzz/<name>.cpp with its
# seeds in fuzz/corpus/<name>/ and its regression inputs in
# fuzz/regressions/<name>/. Read by fuzz/CMakeLists.txt (libFuzzer builds)
# and tests/CMakeLists.txt (replays in the normal builds).
set(CUDACONV_FUZZ_TARGETS filter_spec filter_plain filter_mat image_probe png_reader png_writer npy
    tiff_metadata)
