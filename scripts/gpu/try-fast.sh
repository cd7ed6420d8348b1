#!/usr/bin/env bash
# Runs ON THE GPU MACHINE after scripts/gpu/build.sh: a quick loop for work
# on kernels/fast.cu and fast_strips.cu: fast's own tests against cpu-ref,
# memcheck and racecheck on the quick set, then `cudaconv bench` on issue
# 5's jobs for fast: its tile path (CUDACONV_FAST_STRIPS=0) and its strip
# path at several band heights (CUDACONV_STRIPS_ROWS), side by side.
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=$(mktemp -d)
tar xzf .carry/binaries.tgz -C "$bin"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
"$bin/cudaconv_unit_tests" "fast over its own jobs*" 2>&1 | tail -4
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 1 "$bin/cudaconv_unit_tests" "[gpu-quick]" 2>&1 |
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|passed|failed" | tail -3
done
bench() {
  "$bin/cudaconv" bench --size 4000x3000x3 --depth u8 -f edge -k fast -q 2>&1 | grep -E "^fast|WRONG"
  "$bin/cudaconv" bench --size 4000x3000x1 --depth f32 -f random:3,random:5,random:7 -k fast -q 2>&1 |
    grep -E "^fast|WRONG"
}
echo "== tiles (u8 edge; f32 3, 5, 7)"
CUDACONV_FAST_STRIPS=0 bench
for rows in ${STRIPS_ROWS:-8 16 32}; do
  echo "== strips, bands of $rows rows"
  CUDACONV_STRIPS_ROWS=$rows bench
done
