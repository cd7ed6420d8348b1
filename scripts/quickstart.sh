#!/usr/bin/env bash
# Installs what is missing, builds the release binary (with the CUDA
# variants where the CUDA toolkit is installed, else the CPU ones only) and
# filters a sample image with -k auto (the CPU for this small image, which it
# finishes before CUDA could start; larger jobs go to a CUDA variant when
# there is a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
source scripts/cuda-env.sh
cmake --preset release >/dev/null
cmake --build --preset release
mkdir -p out
build/release/cudaconv images/chelsea.png -f edge -k auto --overwrite -o out/chelsea-edge.png --timings
echo "quickstart: the filtered image is out/chelsea-edge.png; the binary is build/release/cudaconv"
