#!/usr/bin/env bash
# The fuzz stage (docs/TESTING.md): builds the fuzz targets with clang++-14
# (libFuzzer, AddressSanitizer, UndefinedBehaviorSanitizer), then for each
# target replays its regression inputs once and fuzzes it for FUZZ_SECONDS
# (default 30) from a copy of its seed corpus, FUZZ_JOBS targets at once
# (default: one a core). A crash fails the run; its
# input is kept under fuzz/crashes/<target>/ (ignored by git) with a line
# saying how to keep it as a regression input.
#   fuzz/run.sh                  every target
#   fuzz/run.sh png_writer ...   these targets
#   FUZZ_SECONDS=600 fuzz/run.sh filter_spec
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-30}
build=build/fuzz

cmake -S fuzz -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++-14 >/dev/null
cmake --build "$build"

targets=("$@")
if ((${#targets[@]} == 0)); then
  mapfile -t targets < "$build/targets.txt"
fi

for target in "${targets[@]}"; do
  if [[ ! -x $build/fuzz_$target ]]; then
    echo "fuzz: no target $target (targets: $(tr '\n' ' ' < "$build/targets.txt"))" >&2
    exit 2
  fi
done

# Replays a target's regression inputs, then fuzzes it; what it prints is
# the target's report. Fails where a regression input or a fuzzed one does.
fuzz_one() {
  local target=$1
  local binary=$build/fuzz_$target
  local crashes=fuzz/crashes/$target
  local work=$build/work/$target
  # Each regression input once: those are past crashes, which must stay fixed.
  local regressions=()
  if [[ -d fuzz/regressions/$target ]]; then
    mapfile -t regressions < <(find "fuzz/regressions/$target" -type f | sort)
  fi
  if ((${#regressions[@]})); then
    echo "fuzz: $target: replaying ${#regressions[@]} regression inputs"
    if ! "$binary" "${regressions[@]}" > "$work/replay.log" 2>&1; then
      tail -n 60 "$work/replay.log"
      echo "fuzz: $target: a regression input fails (the log above names it; all of it:" \
           "$work/replay.log)"
      return 1
    fi
  fi
  echo "fuzz: $target: fuzzing for ${seconds} s"
  local start=$SECONDS
  touch "$work/started"
  # -timeout: an input that takes this long is a hang, reported as a crash.
  local options=(-max_total_time="$seconds" -timeout=30 -print_final_stats=1
                 -artifact_prefix="$crashes/")
  [[ -f fuzz/dict/$target.dict ]] && options+=(-dict="fuzz/dict/$target.dict")
  if ! "$binary" "${options[@]}" "$work/corpus" > "$work/fuzz.log" 2>&1; then
    tail -n 60 "$work/fuzz.log"
    local input
    for input in $(find "$crashes" -type f -newer "$work/started"); do
      echo "fuzz: $target: crashed on $input (log: $work/fuzz.log); to keep it as a" \
           "regression input: cp $input fuzz/regressions/$target/<what-it-broke>"
    done
    return 1
  fi
  local runs
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/fuzz.log")
  echo "fuzz: $target: $runs runs in $((SECONDS - start)) s, no crash"
}

# Each target is one process on one core: as many at once as there are
# cores (FUZZ_JOBS), each target's report printed whole, in order.
jobs_at_once=${FUZZ_JOBS:-$(nproc)}
for target in "${targets[@]}"; do
  work=$build/work/$target
  rm -rf "$work"
  mkdir -p "fuzz/crashes/$target" "$work"
  cp -R "fuzz/corpus/$target" "$work/corpus"
  while (($(jobs -rp | wc -l) >= jobs_at_once)); do wait -n || true; done
  (
    status=0
    fuzz_one "$target" > "$work/report.log" 2>&1 || status=1
    echo "$status" > "$work/status"
  ) &
done
wait

failed=()
for target in "${targets[@]}"; do
  work=$build/work/$target
  if [[ $(cat "$work/status" 2>/dev/null) == 0 ]]; then
    cat "$work/report.log"
  else
    cat "$work/report.log" >&2
    failed+=("$target")
  fi
done

if ((${#failed[@]})); then
  echo "fuzz: failed: ${failed[*]}" >&2
  exit 1
fi
