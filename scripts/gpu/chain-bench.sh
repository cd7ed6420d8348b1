#!/usr/bin/env bash
# Runs ON THE GPU MACHINE, from the repository root, with carry [".carry"]
# (scripts/gpu/build.sh): filter chains of rank-1 steps against their steps
# alone, on the 4000x3000 RGB JPEG. For each variant (KINDS, default
# "fast-separable fast auto") and chain: the chain's device time (the median
# of 20 runs of every step, --repeat 20 --warmup 3), each step's alone
# (u8 to u8), and the wall time of the chain as one command against its
# steps as commands in turn, each writing a PNG the next one reads. Where
# .carry/baseline.gz is (scripts/gpu/save-baseline.sh), the baseline
# binary's chain device time is printed beside this build's, measured
# right after it. BORDER (e.g. replicate) is given to every command.
set -uo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar xzf .carry/binaries.tgz -C "$work" cudaconv
base=
if [[ -f .carry/baseline.gz ]]; then
  base=$work/baseline
  gunzip -c .carry/baseline.gz >"$base" && chmod +x "$base"
fi
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
c=$work/cudaconv img=.carry/rocket-4000x3000.jpg
border=()
[[ -n ${BORDER:-} ]] && border=(--border "$BORDER")
cat >"$work/median.py" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).readline())
f, t = r["filter_runs"], r["timings_ms"]
print(f"{f['median_ms'] * 1000:8.1f} us  {r['path'] or r['variant']}, "
      f"upload {t['upload']:.2f} ms")
PY
median() { python3 "$work/median.py" "$1"; }
now() { date +%s.%N; }
for k in ${KINDS:-fast-separable fast auto}; do
  for chain in "gaussian:sigma=2 gaussian:sigma=3" "box:5 gaussian:sigma=1.5" \
      "gaussian:sigma=1 gaussian:sigma=1 gaussian:sigma=1"; do
    read -ra steps <<<"$chain"
    args=()
    for f in "${steps[@]}"; do args+=(-f "$f"); done
    args+=("${border[@]}")
    "$c" "$img" "${args[@]}" -k "$k" --repeat 20 --warmup 3 -q --overwrite -o "$work/chain.png" \
      --json "$work/chain.json"
    echo "$k, chain [$chain]${BORDER:+ --border $BORDER}: $(median "$work/chain.json")"
    if [[ -n $base ]]; then
      "$base" "$img" "${args[@]}" -k "$k" --repeat 20 --warmup 3 -q --overwrite \
        -o "$work/base.png" --json "$work/base.json"
      echo "    baseline's chain: $(median "$work/base.json")"
    fi
    i=0
    for f in "${steps[@]}"; do
      "$c" "$img" -f "$f" "${border[@]}" -k "$k" --repeat 20 --warmup 3 -q --overwrite -o "$work/step$i.png" \
        --json "$work/step$i.json"
      echo "    $f alone: $(median "$work/step$i.json")"
      i=$((i + 1))
    done
    start=$(now)
    "$c" "$img" "${args[@]}" -k "$k" -q --overwrite -o "$work/wall.png"
    chain_end=$(now)
    in=$img i=0
    for f in "${steps[@]}"; do
      "$c" "$in" -f "$f" "${border[@]}" -k "$k" -q --overwrite -o "$work/wall$i.png"
      in=$work/wall$i.png i=$((i + 1))
    done
    steps_end=$(now)
    python3 -c "print(f'    wall: the chain {($chain_end - $start) * 1000:.0f} ms, its steps as commands {($steps_end - $chain_end) * 1000:.0f} ms')"
  done
done
