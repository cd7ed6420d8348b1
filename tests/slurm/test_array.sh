#!/usr/bin/env bash
# scripts/slurm/cudaconv-array.sbatch as shipped, on a real one-node Slurm
# (scripts/slurm/local-cluster.sh): 4 tasks over a tree of sample images,
# one of them cancelled (scancel) once it has written an image and then
# resubmitted alone. Checks that every input was done exactly once over all
# the attempts, that the outputs equal a single process's byte for byte,
# that the resubmitted task skipped what the cancelled one had written,
# that merge-summaries.sh calls the run finished, and that the daemons the
# cluster started are gone at the end, by their pids.
#   test_array.sh CUDACONV_BINARY
# Exit 77 (ctest's skip) where the machine cannot run the cluster: not root,
# or slurm-wlm, munge or jq missing (scripts/install-deps.sh --test installs
# them).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cudaconv=$(realpath "$1")

skip() { echo "SKIPPED: $*"; exit 77; }
[[ $(id -u) -eq 0 ]] || skip "not root: slurmd must start the tasks"
for tool in slurmctld slurmd sbatch munged jq; do
  command -v "$tool" >/dev/null || skip "no $tool (scripts/install-deps.sh --test installs it)"
done

fail() { echo "test_array: FAILED: $*" >&2; exit 1; }

tmp=$(mktemp -d)
chmod 755 "$tmp"  # munged, as the munge user, must reach its folder inside
cluster=$tmp/cluster
cleanup() {
  local pids=() f
  for f in "$cluster"/slurmd.pid "$cluster"/slurmctld.pid "$cluster"/munge/munged.pid; do
    [[ -s $f ]] && pids+=("$(<"$f")")
  done
  "$repo/scripts/slurm/local-cluster.sh" stop "$cluster" || true
  local pid
  for pid in "${pids[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then
      echo "test_array: FAILED: daemon pid $pid still runs after the stop" >&2
      kill -KILL "$pid" 2>/dev/null || true
      exit 1
    fi
  done
  rm -rf "$tmp"
}
trap cleanup EXIT

eval "$("$repo/scripts/slurm/local-cluster.sh" start "$cluster")"

# 16 inputs in a tree, from the sample images under other names.
run=$tmp/run
mkdir -p "$run"/in/{a,b/c}
i=0
for sample in camera.png chelsea.png camera-crop.png chelsea-crop.png; do
  for dir in . a b b/c; do
    cp "$repo/images/$sample" "$run/in/$dir/$i-$sample"
    i=$((i + 1))
  done
done
# Slow enough an image (cpu-ref, one thread, a 37x37 filter) for a cancel
# to land between two of a task's images.
args=(in -r -f gaussian:sigma=6 -k cpu-ref -o out/)

(cd "$run" && "$cudaconv" "${args[@]/out\//single/}" -j 1) || fail "the single-process run failed"

export CUDACONV=$cudaconv
submit() {  # submit SBATCH-OPTIONS... : the job id
  sbatch --parsable --chdir="$run" --cpus-per-task=1 "$@" \
    "$repo/scripts/slurm/cudaconv-array.sbatch" "${args[@]}" | cut -d';' -f1
}
job=$(submit --array=0-3)

# Task 2, once it has written an image and while it still runs, is cancelled.
json=$run/cudaconv-logs/${job}_2.jsonl
for _ in $(seq 600); do
  [[ -s $json ]] && grep -q '"status":"done"' "$json" && break
  sleep 0.1
done
grep -q '"status":"done"' "$json" || fail "task 2 wrote no image in 60 s"
state=$(squeue -h -j "${job}_2" -o %T)
[[ $state == RUNNING ]] || fail "task 2 is $state, not running, after its first image"
scancel "${job}_2"

# The array ends; then task 2 alone, resubmitted, finishes what was left.
for _ in $(seq 1200); do
  [[ -z $(squeue -h -j "$job") ]] && break
  sleep 0.1
done
[[ -z $(squeue -h -j "$job") ]] || fail "the array did not end in 120 s"
grep -q '"interrupted":true' "$json" || fail "the cancelled task 2 wrote no interrupted summary"
again=$(CUDACONV_SHARDS=4 submit --array=2 --wait)
retry=$run/cudaconv-logs/${again}_2.jsonl

# Every input done exactly once over the five attempts.
done_inputs=$(cat "$run"/cudaconv-logs/*.jsonl | jq -r 'select(.status == "done") | .input' | sort)
expected=$(cd "$run" && find in -type f | sort)
[[ $(uniq -d <<<"$done_inputs") == "" ]] || fail "done twice: $(uniq -d <<<"$done_inputs")"
[[ $done_inputs == "$expected" ]] || fail "the inputs done are not the inputs: $done_inputs"

# The resubmission skipped what the cancelled attempt wrote, and did the rest.
written=$(jq -r 'select(.status == "done") | .input' "$json" | wc -l)
read -r skipped redone total < <(jq -r 'select(.summary) | "\(.skipped) \(.done) \(.total)"' "$retry")
((written >= 1 && skipped == written && redone >= 1 && skipped + redone == total)) ||
  fail "resubmitted task 2: skipped $skipped, done $redone of $total; the cancelled one wrote $written"

# The outputs equal the single process's, and nothing else was left.
diff -r "$run/single" "$run/out" || fail "the array's outputs differ from a single process's"
[[ -z $(find "$run/out" -name '.*') ]] || fail "temporary files left in out/"

"$repo/scripts/slurm/merge-summaries.sh" "$run/cudaconv-logs" || fail "merge-summaries: not finished"
echo "test_array: passed (array job $job, task 2 cancelled after $written images, resubmitted as $again)"
