#!/usr/bin/env bash
# Runs ON THE GPU MACHINE, from the repository root: a pipeline change timed
# against the baseline binary (.carry/baseline.gz, scripts/gpu/save-baseline.sh)
# on whole batches, interleaved (A B, then B A, ...), so that both see the
# same page cache, clocks and neighbours. Each round runs, with each binary:
#   none, edge, dense31   200 distinct 4000x3000 JPEGs to PNG (as
#                         batch-bench.sh), -f none / edge / a dense 31x31;
#   edge-jpg, dense31-jpg the same JPEGs, -f edge / the dense 31x31, to JPEG;
#   png-in                100 of them as PNGs (level 1), -f edge, to PNG;
#   one-auto, one-fast    one 12-megapixel JPEG to PNG, -f edge, -k auto and
#                         -k fast (a process each: CUDA's start-up included).
# Prints each round's images/s (batches) or seconds (one image) for A and B,
# their medians and B/A (above 1 is B faster for batches, slower for one
# image). ROUNDS (default 3); BATCH_IMAGES (default 200); JOBS, the jobs
# to run (default all, e.g. JOBS="one-auto one-fast"); B_ARGS, options
# given to B alone (e.g. "--decoder cpu", to time a path B has and A had
# without a name); AB_ARGS, options given to both (e.g. "--decoder gpu",
# to time a path both have that the jobs do not take by default).
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin"
tar xzf .carry/binaries.tgz -C "$work/bin" cudaconv
[[ -f .carry/baseline.gz ]] || { echo "batch-ab: no .carry/baseline.gz (scripts/gpu/save-baseline.sh)" >&2; exit 1; }
gunzip -c .carry/baseline.gz >"$work/bin/baseline"
chmod +x "$work/bin/baseline"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
A=$work/bin/baseline B=$work/bin/cudaconv
rounds=${ROUNDS:-3} images=${BATCH_IMAGES:-200}

echo "== batch-ab $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $rounds rounds, A = baseline, B = this build${B_ARGS:+ with $B_ARGS}${AB_ARGS:+, both with $AB_ARGS}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || true
python3 scripts/gpu/make-batch-inputs.py "$work" "$images" "$(nproc)" .carry/rocket-4000x3000.jpg
mkdir -p "$work/png-in"
"$B" $(ls "$work"/in/*.jpg | head -100) -f none -o "$work/png-in/{stem}.png" -q
one=$work/in/img000.jpg

# One run: prints its wall seconds; a failure is said and counted as "-".
run() {  # run BINARY NAME
  local bin=$1 name=$2 out=$work/out-$RANDOM
  local args
  case $name in
    none) args=("$work/in" -f none -o "$out/{stem}.png") ;;
    edge) args=("$work/in" -f edge -o "$out/{stem}.png") ;;
    edge-jpg) args=("$work/in" -f edge -o "$out/{stem}.jpg") ;;
    dense31-jpg) args=("$work/in" -f "$work/dense31.txt" -o "$out/{stem}.jpg") ;;
    dense31) args=("$work/in" -f "$work/dense31.txt" -o "$out/{stem}.png") ;;
    png-in) args=("$work/png-in" -f edge -o "$out/") ;;
    one-auto) args=("$one" -f edge -o "$out/one.png") ;;
    one-fast) args=("$one" -f edge -k fast -o "$out/one.png") ;;
  esac
  mkdir -p "$out"
  [[ $bin == "$B" && -n ${B_ARGS:-} ]] && read -r -a extra <<<"$B_ARGS" && args+=("${extra[@]}")
  [[ -n ${AB_ARGS:-} ]] && read -r -a both <<<"$AB_ARGS" && args+=("${both[@]}")
  local start=$EPOCHREALTIME
  if "$bin" "${args[@]}" -q 2>"$work/err"; then
    awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.3f", b - a}'
  else
    echo "batch-ab: $name on $bin failed: $(head -2 "$work/err")" >&2
    printf -- "-"
  fi
  rm -rf "$out"
}

read -r -a jobs <<<"${JOBS:-none edge edge-jpg dense31 dense31-jpg png-in one-auto one-fast}"
for name in "${jobs[@]}"; do run "$A" "$name" >/dev/null; run "$B" "$name" >/dev/null; done  # warm-up
declare -A walls_a walls_b
for ((r = 0; r < rounds; ++r)); do
  for name in "${jobs[@]}"; do
    if ((r % 2 == 0)); then
      a=$(run "$A" "$name"); b=$(run "$B" "$name")
    else
      b=$(run "$B" "$name"); a=$(run "$A" "$name")
    fi
    walls_a[$name]+="$a " walls_b[$name]+="$b "
  done
done

printf '%-10s %-28s %-28s %s\n' job "A" "B" "B/A"
for name in "${jobs[@]}"; do
  count=$images
  [[ $name == png-in ]] && count=100
  [[ $name == one-* ]] && count=0
  python3 - "$name" "$count" "${walls_a[$name]}" "${walls_b[$name]}" <<'PY'
import statistics, sys
name, count, a, b = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4].split()
def values(walls):  # images/s for a batch, seconds for one image
    return [count / float(w) if count else float(w) for w in walls if w != "-"]
va, vb = values(a), values(b)
unit = "images/s" if count else "s"
fmt = lambda v: " ".join(f"{x:.2f}" if count else f"{x:.3f}" for x in v) or "failed"
ratio = f"{statistics.median(vb) / statistics.median(va):.3f}" if va and vb else "-"
print(f"{name:<10} {fmt(va) + ' ' + unit:<28} {fmt(vb) + ' ' + unit:<28} {ratio}")
PY
done
