#!/usr/bin/env bash
# Runs ON THE GPU MACHINE after scripts/gpu/build.sh: a quick loop for work
# on kernels/fast.cu: its own tests against cpu-ref, memcheck and racecheck
# on the quick set, then `cudaconv bench` on issue 5's jobs for fast.
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=$(mktemp -d)
tar xzf .carry/binaries.tgz -C "$bin"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
"$bin/cudaconv_unit_tests" "fast over its own jobs*" 2>&1 | tail -15
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 1 "$bin/cudaconv_unit_tests" "[gpu-quick]" 2>&1 |
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|passed|failed" | tail -3
done
"$bin/cudaconv" bench --size 4000x3000x3 --depth u8 -f edge,gaussian:5 -k fast,fast-separable 2>&1 | tail -12
"$bin/cudaconv" bench --size 4000x3000x1 --depth f32 -f random:3,random:5,random:7,random:15 -k fast 2>&1 | tail -12
