#!/usr/bin/env bash
# Builds, here on a machine without a GPU, everything the GPU machine runs:
# a self-contained cudaconv and test binary (static OpenCV, header-only fmt
# and spdlog) and a 4000x3000 benchmark image, all into .carry/ (ignored by
# git). Then one device call runs scripts/gpu/check.sh with carry [".carry"].
# See docs/GPU-TESTING.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/install-deps.sh
scripts/gpu/build-static-opencv.sh
source scripts/cuda-env.sh
cmake --preset gpu >/dev/null
cmake --build --preset gpu --target cudaconv cudaconv_unit_tests cudaconv_cli_tests

# The three binaries, stripped and packed: unpacked they pass the carry's
# 64 MiB (each holds every kernel), packed they take about a quarter.
mkdir -p .carry
staging=$(mktemp -d)
cp build/gpu/cudaconv build/gpu/tests/cudaconv_unit_tests build/gpu/tests/cudaconv_cli_tests "$staging/"
strip "$staging"/*
tar czf .carry/binaries.tgz -C "$staging" cudaconv cudaconv_unit_tests cudaconv_cli_tests
rm -rf "$staging" .carry/cudaconv .carry/cudaconv_unit_tests .carry/cudaconv_cli_tests
# The peers' timing programs (../shared/peers), built and run there beside ours.
if [[ -d ../shared/peers ]]; then
  mkdir -p .carry/peers
  cp ../shared/peers/npp_bench.cu ../shared/peers/nvjpeg_batch.cu ../shared/peers/torchvision_batch.py \
    .carry/peers/
fi
# The benchmark input of issue 5's and docs/PERFORMANCE.md's tables:
# 4000x3000 RGB, made from a sample photo (a real image compresses; noise
# would not fit the carry).
if [[ ! -f .carry/rocket-4000x3000.jpg ]]; then
  # Debian's python3 with python3-opencv (another python3 may come first on PATH).
  dpkg-query -W -f='${Status}' python3-opencv 2>/dev/null | grep -q "ok installed" ||
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-opencv >/dev/null
  /usr/bin/python3 -c '
import cv2
img = cv2.imread("images/rocket.jpg")
big = cv2.resize(img, (4000, 3000), interpolation=cv2.INTER_CUBIC)
cv2.imwrite(".carry/rocket-4000x3000.jpg", big, [cv2.IMWRITE_JPEG_QUALITY, 90])'
fi
# Refuse a binary that still needs libraries the GPU machine lacks.
if ldd build/gpu/cudaconv | grep -E 'opencv|spdlog|fmt|jpeg|png|libz|deflate|exiv2'; then
  echo "gpu/build: cudaconv still links the shared libraries above" >&2
  exit 1
fi
du -sh .carry
