#!/usr/bin/env bash
# Installs what is missing, builds the release binary (with the CUDA
# variants, for this machine's GPU, where the CUDA toolkit is installed,
# else the CPU ones only) and
# filters a sample image with -k auto (the CPU for this small image, which it
# finishes before CUDA could start; larger jobs go to a CUDA variant when
# there is a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
source scripts/cuda-env.sh
# The release preset compiles the kernels for every GPU from Turing (sm_75)
# to Hopper, about 2 minutes an architecture on 2 cores; here only the GPU
# this machine has (or Hopper's alone, where none answers) is needed.
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  architectures=native
else
  architectures=90
fi
cmake --preset release -DCMAKE_CUDA_ARCHITECTURES=$architectures >/dev/null
cmake --build --preset release
mkdir -p out
build/release/cudaconv images/chelsea.png -f edge -k auto --overwrite -o out/chelsea-edge.png --timings
echo "quickstart: the filtered image is out/chelsea-edge.png; the binary is build/release/cudaconv"
