#!/usr/bin/env bash
# Runs ON THE GPU MACHINE, from the repository root: every binary that
# scripts/gpu/sweep-fast.sh packed into .carry/sweep, on the same jobs, in
# interleaved rounds (each round runs every job on every binary in turn),
# so that all points see the same clocks. Prints every round's median µs
# per point and job, then a table of the points' medians with each one's
# ratio to the first point (sweep points sort by name: call the reference
# "a-base" or the like). A WRONG output or a refusal is printed as it is.
#
#   scripts/gpu/sweep-ab.sh "4000x3000x3 u8 edge" "4000x3000x1 f32 random:3"
#
# A job is "SIZE DEPTH FILTER [VARIANT [NAME=VALUE ...]]", as for ab.sh.
# ROUNDS (default 3) rounds.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
points=()
for packed in .carry/sweep/cudaconv-*.gz; do
  name=$(basename "$packed" .gz)
  name=${name#cudaconv-}
  gunzip -c "$packed" >"$work/$name" && chmod +x "$work/$name"
  points+=("$name")
done
((${#points[@]})) || { echo "sweep-ab: nothing in .carry/sweep (scripts/gpu/sweep-fast.sh)" >&2; exit 1; }
rounds=${ROUNDS:-3}
[[ $# -gt 0 ]] || set -- "4000x3000x3 u8 edge" "4000x3000x1 f32 random:3" "4000x3000x1 f32 random:5" \
  "4000x3000x1 f32 random:7"

source scripts/gpu/bench-timing.sh

echo "== sweep-ab $(date -u '+%Y-%m-%d %H:%M UTC'), $rounds rounds, points: ${points[*]}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || true
declare -A times
for ((r = 0; r < rounds; ++r)); do
  for job in "$@"; do
    read -r size depth filter variant rest <<<"$job"
    read -ra env_pairs <<<"${rest:-}"
    variant=${variant:-fast}
    for point in "${points[@]}"; do
      t=$( ((${#env_pairs[@]})) && export "${env_pairs[@]}"; time_one "$work/$point" "$size" "$depth" "$filter" "$variant")
      times["$job|$point"]+="$t "
    done
  done
done
printf '%-44s' "job"
for point in "${points[@]}"; do printf ' %-24s' "$point"; done
echo
for job in "$@"; do
  printf '%-44s' "$job"
  base=""
  for point in "${points[@]}"; do
    m=$(echo "${times["$job|$point"]}" | median)
    [[ -z $base ]] && base=$m
    ratio=$([[ -n $m && -n $base ]] && awk -v a="$base" -v b="$m" 'BEGIN {printf "%.3f", b / a}' || echo "-")
    printf ' %-24s' "${m:-${times["$job|$point"]}} ($ratio)"
  done
  echo
  for point in "${points[@]}"; do echo "    $point: ${times["$job|$point"]}"; done
done
