#!/usr/bin/env bash
# Runs ON A MACHINE WITH TWO GPUS (or more), from the repository root, after
# scripts/gpu/build.sh made .carry/ here: issue 37's --devices, checked and
# timed in one run.
#   1. the unit and CLI tests of --devices ([devices]: the pipeline's lanes
#      with fake devices, the option, and the [gpu] ones: every CUDA variant
#      on threads bound to different devices at once, --devices all against
#      --devices 1, and by default the first device alone);
#   2. 200 distinct 4000x3000 JPEGs (make-batch-inputs.py, as batch-bench.sh;
#      IMAGES=N makes N instead);
#   3. outputs with --devices 0,1 byte-identical (cmp) to one device's, on
#      the first 40 images (fewer where IMAGES is less): -k fast and -k auto, -f edge and a dense 31x31
#      filter, --decoder gpu and cpu, to PNG (compressed on the GPU), and
#      one case to JPEG (encoded by nvJPEG on each device);
#   4. images/s by wall time, one device against two, 3 rounds interleaved,
#      over all the images to JPEG: edge and dense31, with the CPU's codecs
#      (--decoder cpu --encoder cpu) and the GPU's (--decoder gpu --encoder
#      gpu), and each two-device run's images per device (--json);
#   5. bench --devices 0,1: fast on edge and a dense 31x31 filter, 4000x3000
#      RGB, each device's table;
#   6. a summary.
# About 2 minutes on two H100s with 32 cores. Logs go to $OUT (or
# ./gpu-out): devices-check.log, and the rest packed in devices-logs.tgz.
# Exits 1 where a test or an identity check failed.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
final=${OUT:-gpu-out}
mkdir -p "$final"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin=$work/bin
mkdir -p "$bin" "$work/logs"
tar xzf .carry/binaries.tgz -C "$bin"
# cuDNN 9 is only inside the Python environment on the GPU machine (check.sh).
for d in /opt/torch/.venv/lib/python3*/site-packages/nvidia/cudnn/lib; do
  [[ -d $d ]] && export LD_LIBRARY_PATH=$d:${LD_LIBRARY_PATH:-}
done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CUDACONV_BINARY=$bin/cudaconv CUDACONV_SOURCE_DIR=$PWD
cudaconv=$bin/cudaconv
images=${IMAGES:-200}
some=$((images < 40 ? images : 40))  # the identity checks'
logs=$work/logs
log=$final/devices-check.log
: >"$log"
say() { echo "$*" | tee -a "$log"; }
summary=()
verdict() { summary+=("$1"); say "$1"; }

say "== devices-check $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores"
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader 2>&1 | tee -a "$log"
"$cudaconv" list devices 2>&1 | tee -a "$log"
gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null | wc -l)
if ((gpus < 2)); then
  say "this machine has $gpus GPU(s); devices-check needs two"
  exit 1
fi

# 1. The tests of --devices.
start=$SECONDS
if "$bin/cudaconv_unit_tests" "[devices],[batch]" >"$logs/unit-tests.log" 2>&1; then
  verdict "PASS  unit tests [devices],[batch] ($((SECONDS - start)) s)"
else
  verdict "FAIL  unit tests [devices],[batch] ($((SECONDS - start)) s): see unit-tests.log"
fi
grep -E "SKIPPED|test cases|passed" "$logs/unit-tests.log" | tail -4 | tee -a "$log"
start=$SECONDS
if "$bin/cudaconv_cli_tests" "[devices]" >"$logs/cli-tests.log" 2>&1; then
  verdict "PASS  CLI tests [devices] ($((SECONDS - start)) s)"
else
  verdict "FAIL  CLI tests [devices] ($((SECONDS - start)) s): see cli-tests.log"
fi
grep -E "SKIPPED|test cases|passed" "$logs/cli-tests.log" | tail -4 | tee -a "$log"

# 2. Inputs, and the 31x31 filter.
start=$SECONDS
python3 scripts/gpu/make-batch-inputs.py "$work" "$images" "$(nproc)" .carry/rocket-4000x3000.jpg
say "inputs: $(ls "$work/in" | wc -l) JPEGs of 4000x3000, $(du -sh "$work/in" | cut -f1), made in $((SECONDS - start)) s"
mkdir -p "$work/some"
for f in $(ls "$work/in" | head -"$some"); do ln -s "$work/in/$f" "$work/some/$f"; done
dense=$work/dense31.txt

# Warm-up, untimed: the binary's pages and each device's first start.
mkdir -p "$work/warm"
cp "$work"/in/img00[0-3].jpg "$work/warm/"
"$cudaconv" "$work/warm" -f edge -k fast --devices 0,1 -q -o "$work/warm-out/" ||
  say "warm-up failed"

# The images each device did, from a run's --json summary.
per_device() {  # per_device JSON
  python3 - "$1" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
s = [r for r in rows if r.get("summary")]
if not s:
    print("no summary")
else:
    d = s[-1].get("devices", [])
    print(", ".join(f"device {e['device']}: {e['done']}" for e in d) or "no devices listed")
PY
}

# 3. Two devices' outputs against one's, byte for byte.
identical_all=1
compare_case() {  # compare_case NAME OUTPUT_TEMPLATE_EXT ARGS...
  local name=$1 ext=$2; shift 2
  local one=$work/id-$name-one two=$work/id-$name-two
  if ! "$cudaconv" "$work/some" "$@" --devices 1 -q -o "$one/{stem}.$ext" \
       --json "$logs/id-$name-one.jsonl" 2>"$logs/id-$name-one.err"; then
    verdict "FAIL  identical $name: the one-device run failed (id-$name-one.err)"
    identical_all=0; return
  fi
  if ! "$cudaconv" "$work/some" "$@" --devices 0,1 -q -o "$two/{stem}.$ext" \
       --json "$logs/id-$name-two.jsonl" 2>"$logs/id-$name-two.err"; then
    verdict "FAIL  identical $name: the two-device run failed (id-$name-two.err)"
    identical_all=0; return
  fi
  local differ=0 missing=0
  for f in "$one"/*; do
    local g
    g=$two/$(basename "$f")
    if [[ ! -f $g ]]; then missing=$((missing + 1))
    elif ! cmp -s "$f" "$g"; then differ=$((differ + 1)); fi
  done
  local counts
  counts=$(per_device "$logs/id-$name-two.jsonl")
  if ((differ == 0 && missing == 0)) && [[ $(ls "$one" | wc -l) == "$some" && $(ls "$two" | wc -l) == "$some" ]]; then
    local note=""
    [[ $counts == *": 0"* ]] && note=" (one device did none: only the other's outputs were compared)"
    verdict "PASS  identical $name: $some of $some files the same; two devices: $counts$note"
  else
    verdict "FAIL  identical $name: $differ differ, $missing missing; two devices: $counts"
    identical_all=0
  fi
  rm -rf "$one" "$two"
}
for kernel in fast auto; do
  for filter in edge dense31; do
    spec=$filter
    [[ $filter == dense31 ]] && spec=$dense
    for decoder in gpu cpu; do
      compare_case "$kernel-$filter-decoder-$decoder" png -f "$spec" -k "$kernel" --decoder "$decoder"
    done
  done
done
compare_case "auto-edge-to-jpeg-gpu-codecs" jpg -f edge -k auto --decoder gpu --encoder gpu

# 4. One device against two, images/s by wall time, interleaved rounds.
: >"$work/times"
timed_run() {  # timed_run NAME DEVICES ARGS...
  local name=$1 devices=$2; shift 2
  rm -rf "$work/t-out" "$logs/$name.jsonl"
  local t0=$EPOCHREALTIME
  if "$cudaconv" "$work/in" "$@" --devices "$devices" -q -o "$work/t-out/{stem}.jpg" \
       --json "$logs/$name.jsonl" 2>"$logs/$name.err"; then
    local t1=$EPOCHREALTIME
    echo "$name $(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')" >>"$work/times"
  else
    say "$name: failed (exit $?): $(tail -1 "$logs/$name.err")"
  fi
}
for round in 1 2 3; do
  for filter in edge dense31; do
    spec=$filter
    [[ $filter == dense31 ]] && spec=$dense
    for codecs in cpu gpu; do
      for devices in 1 0,1; do
        label=one
        [[ $devices == 0,1 ]] && label=two
        timed_run "time-$filter-$codecs-codecs-$label-r$round" "$devices" -f "$spec" -k auto \
          --decoder "$codecs" --encoder "$codecs"
      done
    done
  done
  say "round $round done at $SECONDS s"
done
for filter in edge dense31; do
  for codecs in cpu gpu; do
    say "two devices, $filter, $codecs codecs, last round: $(per_device "$logs/time-$filter-$codecs-codecs-two-r3.jsonl")"
  done
done

# 5. Each device's kernel times (bench --devices).
start=$SECONDS
if "$cudaconv" bench --devices 0,1 -k fast --size 4000x3000 -f edge,random:31 --depth u8 \
     --warmup 3 --repeat 10 >"$logs/bench.log" 2>&1; then
  verdict "PASS  bench --devices 0,1 ($((SECONDS - start)) s)"
else
  verdict "FAIL  bench --devices 0,1 ($((SECONDS - start)) s): see bench.log"
fi
grep -E "^cudaconv bench|fast" "$logs/bench.log" | tee -a "$log"

# 6. Results.
python3 - "$work/times" "$images" <<'PY' | tee -a "$log"
import statistics, sys
walls = {}
n = int(sys.argv[2])
for line in open(sys.argv[1]):
    name, wall = line.split()
    key = name.rsplit("-r", 1)[0]
    walls.setdefault(key, []).append(float(wall))
print(f"{str(n) + ' JPEGs 4000x3000 -> JPEG':<34} {'1 device':>9} {'2 devices':>10} {'ratio':>6}   rounds (s)")
for filter in ("edge", "dense31"):
    for codecs in ("cpu", "gpu"):
        one = walls.get(f"time-{filter}-{codecs}-codecs-one", [])
        two = walls.get(f"time-{filter}-{codecs}-codecs-two", [])
        if not one or not two:
            print(f"{filter}, {codecs} codecs: missing runs")
            continue
        ips1 = n / statistics.median(one)
        ips2 = n / statistics.median(two)
        rounds = " ".join(f"{w:.2f}" for w in one) + " | " + " ".join(f"{w:.2f}" for w in two)
        print(f"{filter + ', ' + codecs + ' codecs':<34} {ips1:7.1f}/s {ips2:8.1f}/s {ips2 / ips1:5.2f}x   {rounds}")
print(f"images/s: {n} over the median process wall time (start-up included); issue 37's "
      "target is 1.8x for a GPU-bound batch")
PY
echo "== summary" | tee -a "$log"
printf '%s\n' "${summary[@]}" | tee -a "$log"
((identical_all)) && say "outputs: two devices byte-identical to one in every case" ||
  say "outputs: SOME CASES DIFFER OR FAILED (above)"
tar czf "$final/devices-logs.tgz" -C "$logs" .
say "total $SECONDS s; logs in $final (devices-check.log, devices-logs.tgz)"
# Exit 1 where a check failed, so that a caller need not read the log.
for line in "${summary[@]}"; do [[ $line == FAIL* ]] && exit 1; done
exit 0
