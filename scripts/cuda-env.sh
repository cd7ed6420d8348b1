# Sourced by the build scripts: lets CMake find nvcc when it is not on PATH
# but in the CUDA toolkit's default prefix.
if [[ -z ${CUDACXX:-} ]] && ! command -v nvcc >/dev/null 2>&1 && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export CUDACXX=/usr/local/cuda/bin/nvcc
fi
