#!/usr/bin/env bash
# Runs ON THE GPU MACHINE, from the repository root, after scripts/gpu/build.sh
# made .carry/ here: the rank-1 (Gaussian) jobs of fast-separable beside fast
# and the two-kernel separable; then
# fast-separable's two paths on the same u8 jobs (CUDACONV_FAST_SEPARABLE_MMA:
# 1 the default, its tensor-core path; 0 its CUDA-core path).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
tar xzf .carry/binaries.tgz -C "$bin"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
gaussians=gaussian:sigma=5,gaussian:15,gaussian:11,gaussian:9,gaussian:7,gaussian:5,gaussian:3
echo "== as auto sees them (fast-separable on its default path)"
"$bin/cudaconv" bench --size 4000x3000x3 --depth u8 -f "$gaussians" -k fast,fast-separable,separable
"$bin/cudaconv" bench --size 4000x3000x1 --depth f32,u8 -f "$gaussians" -k fast,fast-separable,separable
for mode in 1 0; do
  echo "== fast-separable with CUDACONV_FAST_SEPARABLE_MMA=$mode"
  CUDACONV_FAST_SEPARABLE_MMA=$mode "$bin/cudaconv" bench --size 4000x3000x3,4000x3000x1 --depth u8 \
    -f "$gaussians" -k fast-separable
done
