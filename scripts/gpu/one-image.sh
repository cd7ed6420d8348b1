#!/usr/bin/env bash
# Runs ON THE GPU MACHINE, from the repository root: auto's choice for one
# image (src/core/auto_select.hpp) against the choices it had, as whole
# processes (CUDA's start-up and teardown included). For each input and
# filter it times `-k auto`, `-k cpu` and each GPU variant that can run the
# job, best of ROUNDS (default 3) process wall times, interleaved round by
# round. Inputs: one 12-megapixel JPEG (RGB u8, written as PNG), the same
# image as a 16-bit PNG (to PNG) and as a float TIFF (to TIFF). Filters:
# edge, gaussian:sigma=3, a dense 31x31, gaussian:sigma=20.
# Prints one line a job: auto's time and choice, cpu's, the best GPU
# variant's, and auto against the better of cpu and that (the target is at
# most 1.10). Then `bench` of the cpu paths on this machine's cores, which
# the CPU side of auto's cost model is calibrated from. JSON lines and the
# bench CSV are left under $OUT (or a temporary folder).
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=${OUT:-$work}
mkdir -p "$work/bin"
tar xzf .carry/binaries.tgz -C "$work/bin" cudaconv
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
bin=$work/bin/cudaconv
rounds=${ROUNDS:-3}
gpu_variants=(fast fast-separable separable fft)

echo "== one-image $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, best of $rounds"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || true
python3 scripts/gpu/make-batch-inputs.py "$work" 1 1 .carry/rocket-4000x3000.jpg
python3 - "$work" <<'EOF'
import sys
import cv2
import numpy as np
work = sys.argv[1]
img = cv2.imread(f"{work}/in/img000.jpg", cv2.IMREAD_COLOR)
cv2.imwrite(f"{work}/u16.png", img.astype(np.uint16) * 257, [cv2.IMWRITE_PNG_COMPRESSION, 1])
cv2.imwrite(f"{work}/f32.tif", img.astype(np.float32) / 255)
EOF
declare -A input=([u8]="$work/in/img000.jpg" [u16]="$work/u16.png" [f32]="$work/f32.tif")
declare -A ext=([u8]=png [u16]=png [f32]=tif)
declare -A filter=([edge]=edge [sigma3]=gaussian:sigma=3 [dense31]="$work/dense31.txt"
                   [sigma20]=gaussian:sigma=20)

# One process: prints its wall seconds, or "-" where the variant refused.
run() {  # run DEPTH FILTER KERNEL
  local target=$work/out.${ext[$1]} start=$EPOCHREALTIME
  rm -f "$target"
  if "$bin" "${input[$1]}" -f "${filter[$2]}" -k "$3" -o "$target" -q \
      --json "$out/$1-$2-$3.jsonl" --overwrite 2>/dev/null; then
    awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.3f", b - a}'
  else
    printf -- "-"
  fi
}

# The least of a list of walls, "-" (refused) and blanks left out; empty if none.
best() { tr ' ' '\n' | { grep -v '^-\?$' || true; } | sort -g | head -1; }

printf '%-5s %-8s %-22s %-18s %-24s %s\n' depth filter "auto (choice)" "cpu (path)" "best GPU" "auto/better"
for depth in u8 u16 f32; do
  for f in edge sigma3 dense31 sigma20; do
    declare -A walls=()
    kernels=(auto cpu "${gpu_variants[@]}")
    for ((r = 0; r < rounds; ++r)); do
      for k in "${kernels[@]}"; do
        walls[$k]+="$(run "$depth" "$f" "$k") "
      done
      # later rounds in the opposite order
      kernels=($(printf '%s\n' "${kernels[@]}" | tac))
    done
    auto=$(best <<<"${walls[auto]}") cpu=$(best <<<"${walls[cpu]}")
    gpu="" gpu_name=""
    for k in "${gpu_variants[@]}"; do
      t=$(best <<<"${walls[$k]}")
      [[ -n $t ]] || continue
      if [[ -z $gpu ]] || awk -v a="$t" -v b="$gpu" 'BEGIN {exit !(a < b)}'; then gpu=$t gpu_name=$k; fi
    done
    choice=$(grep -o '"variant":"[^"]*"' "$out/$depth-$f-auto.jsonl" | head -1 | cut -d'"' -f4)
    path=$(grep -o '"path":"[^"]*"' "$out/$depth-$f-cpu.jsonl" | head -1 | cut -d'"' -f4)
    ratio=$(awk -v a="$auto" -v c="$cpu" -v g="${gpu:-1e9}" \
      'BEGIN {b = c < g ? c : g; printf "%.2f", a / b}')
    printf '%-5s %-8s %-22s %-18s %-24s %s\n' "$depth" "$f" "$auto ($choice)" "$cpu (${path:-?})" \
      "${gpu:--} (${gpu_name:--})" "$ratio"
    unset walls
  done
done

echo "== the cpu paths on $(nproc) cores (bench, median of 5)"
"$bin" bench --size 4000x3000x3,4000x3000x1 --depth u8,u16,f32 \
  -f edge,box:5,gaussian:sigma=1,gaussian:sigma=3,gaussian:sigma=20,random:5,random:7,random:15,random:31 \
  -k cpu.direct,cpu.two-pass,cpu.fft,cpu --no-verify --warmup 1 --repeat 5 \
  --csv "$out/cpu-paths.csv" --overwrite
