#!/usr/bin/env bash
# What CI runs (.ci/run) and the README's test command: installs what is
# missing, then runs the stages of docs/TESTING.md, each timed:
#   format that every C++ and CUDA source is formatted as .clang-format says
#          (scripts/format.sh --check; scripts/format.sh formats them)
#   dev    the dev build (with the CUDA variants where the toolkit is) and
#          its whole test suite (GPU tests skip visibly without a device)
#   asan   the asan build (CPU variants, AddressSanitizer and UBSan) and its
#          unit and CLI tests, the CLI tests running the sanitized binary
#   fuzz   each fuzz target for FUZZ_SECONDS (default 30) after replaying
#          its regression inputs (fuzz/run.sh)
# Every stage runs; the run fails if any did. scripts/test.sh asan fuzz runs
# only those stages.
set -euo pipefail
cd "$(dirname "$0")/.."

stages=("$@")
if ((${#stages[@]} == 0)); then
  stages=(format dev asan fuzz)
fi
for stage in "${stages[@]}"; do
  case $stage in
    format | dev | asan | fuzz) ;;
    *) echo "test.sh: no stage $stage (stages: format dev asan fuzz)" >&2; exit 2 ;;
  esac
done

scripts/install-deps.sh --test
source scripts/cuda-env.sh

run_stage() {
  case $1 in
    format)
      scripts/format.sh --check ;;
    dev | asan)
      cmake --preset "$1" >/dev/null && cmake --build --preset "$1" && ctest --preset "$1" ;;
    fuzz)
      fuzz/run.sh ;;
  esac
}

# Seconds of CPU this script's finished child processes have used (cutime
# and cstime in /proc/$$/stat): with the wall time, what a stage would take
# on an idle machine of this size.
ticks=$(getconf CLK_TCK)
cpu_seconds() {
  local stat
  read -ra stat < "/proc/$$/stat"
  echo $(((stat[15] + stat[16]) / ticks))
}
minutes() { printf '%d min %02d s' $(($1 / 60)) $(($1 % 60)); }
load() { cut -d' ' -f1-3 /proc/loadavg; }

summary=()
failed=0
total_start=$SECONDS
for stage in "${stages[@]}"; do
  echo "test.sh: stage $stage (load average $(load))"
  start=$SECONDS
  cpu_start=$(cpu_seconds)
  if run_stage "$stage"; then result=passed; else result=FAILED; failed=1; fi
  line="$(printf '%-6s %-6s' "$stage" "$result") in $(minutes $((SECONDS - start))), CPU $(minutes $(($(cpu_seconds) - cpu_start)))"
  summary+=("$line")
  echo "test.sh: stage $line (load average $(load))"
done
printf 'test.sh: %s\n' "${summary[@]}"
echo "test.sh: total $(minutes $((SECONDS - total_start))), CPU $(minutes "$(cpu_seconds)") (load average $(load))"
exit "$failed"
