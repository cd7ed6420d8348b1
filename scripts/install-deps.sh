#!/usr/bin/env bash
# Installs what cudaconv needs from Debian 12's packages, only what is
# missing; with --test also what scripts/test.sh's fuzz stage needs (clang
# 14 and its libFuzzer), its format stage (clang-format 14) and the Slurm
# test (slurm-wlm, munge, jq: tests/slurm/test_array.sh) and the zsh
# completion's (zsh: tests/package/test_deb.sh) and the layer test's
# (python3-numpy: tests/layer/test_apply_conv2d.py). The CUDA
# toolkit (nvcc, cuFFT, optionally cuDNN) is not a Debian package: where it
# is installed (in its default prefix or on PATH) the CUDA variants are
# built, otherwise the CPU variants only.
set -euo pipefail

packages=(cmake ninja-build g++ pkg-config libopencv-dev libcli11-dev libspdlog-dev libfmt-dev
          nlohmann-json3-dev catch2 libdeflate-dev libtbb-dev libpng-dev libjpeg62-turbo-dev zlib1g-dev
          libfftw3-dev libhwy-dev libexiv2-dev libtiff-dev help2man dpkg-dev)
if [[ ${1:-} == --test ]]; then
  packages+=(clang-14 libclang-rt-14-dev clang-format-14 slurm-wlm munge jq zsh python3-numpy)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}" >&2
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

# The toolkit's default prefix; CUDACXX or PATH may point elsewhere.
if [[ -z ${CUDACXX:-} ]] && ! command -v nvcc >/dev/null 2>&1 && [[ ! -x /usr/local/cuda/bin/nvcc ]]; then
  echo "install-deps: no CUDA toolkit (nvcc): the CUDA variants are not built, the CPU ones are" >&2
fi
