#!/usr/bin/env bash
# Runs ON THE GPU MACHINE, from the repository root, after scripts/gpu/build.sh
# made .carry/ here: the rank-1 (Gaussian) jobs of fast-separable beside fast,
# the two-kernel separable and fft, as recorded in docs/PERFORMANCE.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
tar xzf .carry/binaries.tgz -C "$bin"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
"$bin/cudaconv" bench --size 4000x3000x3 --depth u8 -f gaussian:sigma=5,gaussian:5,gaussian:3 \
  -k fast,fast-separable,separable,fft
"$bin/cudaconv" bench --size 4000x3000x1 --depth f32,u8 \
  -f gaussian:sigma=5,gaussian:15,gaussian:7,gaussian:3 -k fast,fast-separable,separable
