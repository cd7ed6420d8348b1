#!/usr/bin/env bash
# Runs ON THE GPU MACHINE: benches every binary sweep-fast.sh built, on the
# fast variant's target jobs, every output verified. One line per point
# and job: the bench's own row for fast.
set -uo pipefail
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
work=$(mktemp -d)
for packed in .carry/sweep/cudaconv-*.gz; do
  name=$(basename "$packed" .gz)
  gunzip -c "$packed" >"$work/$name" && chmod +x "$work/$name"
  echo "== ${name#cudaconv-}"
  "$work/$name" bench --size 4000x3000x3 --depth u8 -f edge,gaussian:5 -k fast -q 2>&1 |
    grep -E "^\S+ \(|^fast|WRONG"
  "$work/$name" bench --size 4000x3000x1 --depth f32 -f random:3,random:5,random:7,random:15 \
    -k fast -q 2>&1 | grep -E "^\S+ \(|^fast|WRONG"
done
