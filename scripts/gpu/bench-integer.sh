#!/usr/bin/env bash
# Runs ON THE GPU MACHINE, from the repository root, after scripts/gpu/build.sh
# made .carry/ here: fast's strip path on u8 filters with integer taps, its
# integer (DP4A) path beside its float path (CUDACONV_FAST_STRIPS_DP4A=0),
# on 4000x3000 gray, RGB and RGBA.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
tar xzf .carry/binaries.tgz -C "$bin"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
filters=edge,laplacian,filters/samples/sobel5x5.csv,filters/samples/log7x7.txt
for mode in 1 0; do
  echo "== fast with CUDACONV_FAST_STRIPS_DP4A=$mode"
  CUDACONV_FAST_STRIPS_DP4A=$mode "$bin/cudaconv" bench --size 4000x3000x1,4000x3000x3,4000x3000x4 \
    --depth u8 -f "$filters" -k fast -q
done
