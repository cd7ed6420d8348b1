#!/usr/bin/env bash
# Runs ON THE GPU MACHINE, from the repository root, after scripts/gpu/build.sh
# made .carry/ here: the composites beside their named paths on 4000x3000
# images (`list kernels` names the paths and their --param values):
#  - fast and each of its paths on u8 filters with integer taps (gray, RGB
#    and RGBA), then fast.strips' DP4A sums beside its float sums (dp4a=0);
#  - fast-separable and its two paths on Gaussians, beside fast's own
#    dense paths (fast gives the Gaussians where fast-separable is ahead to
#    its kernels, fast.separable) and the two-kernel separable (RGB u8; gray
#    f32 and u8): the crossovers of separable_ahead_of_fast.
# A path that cannot run a job says why instead of a time.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
tar xzf .carry/binaries.tgz -C "$bin"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
integer=edge,laplacian,filters/samples/sobel5x5.csv,filters/samples/log7x7.txt
gaussians=gaussian:sigma=5,gaussian:15,gaussian:11,gaussian:9,gaussian:7,gaussian:5,gaussian:3
sizes=4000x3000x1,4000x3000x3,4000x3000x4

echo "== fast and its paths, integer taps"
"$bin/cudaconv" bench --size "$sizes" --depth u8 -f "$integer" -k 'fast,fast.*' -q
echo "== fast.strips: DP4A (dp4a=1) and float (dp4a=0) sums"
for dp4a in 1 0; do
  "$bin/cudaconv" bench --size "$sizes" --depth u8 -f "$integer" -k fast.strips \
    --param dp4a=$dp4a -q
done
echo "== fast-separable and its paths on Gaussians, beside fast's dense paths and separable"
dense=fast.registers,fast.strips,fast.tiles,fast.mma
"$bin/cudaconv" bench --size 4000x3000x3 --depth u8 -f "$gaussians" \
  -k "fast-separable,fast-separable.*,$dense,separable" -q
"$bin/cudaconv" bench --size 4000x3000x1 --depth f32,u8 -f "$gaussians" \
  -k "fast-separable,fast-separable.*,$dense,separable" -q
