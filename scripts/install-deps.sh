#!/usr/bin/env bash
# Installs what cudaconv needs from Debian 12's packages, only what is
# missing. The CUDA toolkit (nvcc, cuFFT, optionally cuDNN) is expected in
# its default prefix or on PATH; it is not a Debian package.
set -euo pipefail

packages=(cmake ninja-build g++ pkg-config libopencv-dev libcli11-dev libspdlog-dev libfmt-dev
          nlohmann-json3-dev catch2 libdeflate-dev libtbb-dev libpng-dev)

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

if ! command -v nvcc >/dev/null 2>&1; then
  # The toolkit's default prefix; CUDACXX or PATH may point elsewhere.
  if [[ -z ${CUDACXX:-} && ! -x /usr/local/cuda/bin/nvcc ]]; then
    echo "install-deps: nvcc not found: install the CUDA toolkit or set CUDACXX" >&2
    exit 1
  fi
fi
