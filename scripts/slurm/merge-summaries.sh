#!/usr/bin/env bash
# Adds up the JSON lines of a sharded run (cudaconv-array.sbatch's
# cudaconv-logs/, or any --json files of --shard runs): a line a shard, from
# its latest attempt, then the whole. Images are counted by their inputs
# over every attempt, so a shard resubmitted after a cancel counts each
# image once; an image done twice is named (it means two runs wrote it).
# Exits 1 when a shard is missing, unfinished or has failures. Needs jq.
#   merge-summaries.sh [LOGDIR|FILE.jsonl...]   (default cudaconv-logs)
set -euo pipefail
args=("$@")
((${#args[@]})) || args=(cudaconv-logs)
files=()
for a in "${args[@]}"; do
  if [[ -d $a ]]; then
    files+=("$a"/*.jsonl)
  else
    files+=("$a")
  fi
done
# Attempts in the order they were submitted: by the array job id that
# starts the file's name, then by name.
mapfile -t files < <(printf '%s\n' "${files[@]}" | sort -V)
[[ -e ${files[0]} ]] || { echo "merge-summaries: no JSON lines in ${args[*]}" >&2; exit 1; }

report=$(jq -rn '
  [inputs] as $lines
  | ($lines | map(select(.summary == true and .shard != null))) as $summaries
  | ($summaries | map(.shard) | unique) as $shards
  | ($summaries | map(.shard | split("/")[1] | tonumber) | unique) as $counts
  | ($lines | map(select(.status == "done")) | group_by(.input)) as $done
  | ($done | map(select(length > 1) | .[0].input)) as $twice
  | [ $shards[] as $s
      | ($summaries | map(select(.shard == $s)) | last) as $l
      | { shard: $s, done: $l.done, skipped: $l.skipped, failed: $l.failed,
          not_done: $l.not_done, total: $l.total,
          finished: ($l.failed == 0 and $l.not_done == 0 and ($l.interrupted | not)) } ] as $latest
  | ($latest[] | "shard \(.shard): done \(.done), skipped \(.skipped), failed \(.failed), not done \(.not_done) of \(.total)\(if .finished then "" else "  (unfinished)" end)"),
    (if ($counts | length) > 1 then "shard counts differ: \($counts | map(tostring) | join(", ")); these are runs of different splits" else empty end),
    ( ($counts[0] // 0) as $n
      | ($latest | map(select(.finished)) | length) as $finished
      | "all: \($latest | map(.total) | add // 0) images, done \($done | length), failed \($latest | map(.failed) | add // 0); \($finished) of \($n) shards finished" ),
    (if ($twice | length) > 0 then "done more than once: \($twice | join(", "))" else empty end)
' "${files[@]}")
echo "$report"
# Finished: one split, every shard of it finished, no image done twice.
grep -qE '^all: .*; ([0-9]+) of \1 shards finished$' <<<"$report" &&
  ! grep -qE '^(shard counts differ|done more than once)' <<<"$report"
