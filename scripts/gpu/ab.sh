#!/usr/bin/env bash
# Runs ON THE GPU MACHINE, from the repository root: the baseline binary
# (.carry/baseline.gz, from scripts/gpu/save-baseline.sh) against the one
# scripts/gpu/build.sh packed last, on the same jobs, in interleaved rounds
# (A B A B ...), so that both see the same clocks and neighbours. Each job
# is `cudaconv bench` on one size, depth, filter and variant, outputs
# verified; a line gives every round's median µs for A and for B and the
# ratio of their medians. A WRONG output or a refusal is printed as it is.
#
#   scripts/gpu/ab.sh "4000x3000x1 f32 random:3" "4000x3000x3 u8 edge"
#   ROUNDS=5 scripts/gpu/ab.sh "4000x3000x3 u8 edge fast.strips band_rows=16"
#
# A job is "SIZE DEPTH FILTER [VARIANT [NAME=VALUE ...]]": the variant is
# fast unless named; the NAME=VALUE pairs go to both binaries as
# `bench --param NAME=VALUE` (a binary that lacks the variant or the
# parameter prints its refusal). ROUNDS (default 3) rounds a job; CUDACONV
# (default: unpack both from .carry) and BASELINE name other binaries.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
after=${CUDACONV:-}
before=${BASELINE:-}
if [[ -z $after ]]; then
  tar xzf .carry/binaries.tgz -C "$work" cudaconv
  after=$work/cudaconv
fi
if [[ -z $before ]]; then
  [[ -f .carry/baseline.gz ]] || { echo "ab: no .carry/baseline.gz (scripts/gpu/save-baseline.sh)" >&2; exit 1; }
  gunzip -c .carry/baseline.gz >"$work/baseline"
  chmod +x "$work/baseline"
  before=$work/baseline
fi
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
rounds=${ROUNDS:-3}
[[ $# -gt 0 ]] || set -- "4000x3000x3 u8 edge" "4000x3000x1 f32 random:3" "4000x3000x1 f32 random:5" \
  "4000x3000x1 f32 random:7" "4000x3000x1 f32 random:15" "4000x3000x3 u8 gaussian:sigma=5 fast-separable"

source scripts/gpu/bench-timing.sh

echo "== ab $(date -u '+%Y-%m-%d %H:%M UTC'), $rounds rounds, A = baseline, B = this build"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || true
printf '%-52s %-26s %-26s %s\n' "job" "A (µs)" "B (µs)" "B/A"
for job in "$@"; do
  read -r size depth filter variant rest <<<"$job"
  read -ra params <<<"${rest:-}"
  variant=${variant:-fast}
  a=() b=()
  for ((r = 0; r < rounds; ++r)); do
    a+=("$(time_one "$before" "$size" "$depth" "$filter" "$variant" "${params[@]}")")
    b+=("$(time_one "$after" "$size" "$depth" "$filter" "$variant" "${params[@]}")")
  done
  ma=$(echo "${a[*]}" | median) mb=$(echo "${b[*]}" | median)
  ratio=$([[ -n $ma && -n $mb ]] && awk -v a="$ma" -v b="$mb" 'BEGIN {printf "%.3f", b / a}' || echo "-")
  printf '%-52s %-26s %-26s %s\n' "$job" "${a[*]}" "${b[*]}" "$ratio"
done
