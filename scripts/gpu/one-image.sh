#!/usr/bin/env bash
# Runs ON THE GPU MACHINE, from the repository root: auto's choice for one
# image (src/core/auto_select.hpp) against the choices it had, as whole
# processes (CUDA's start-up and teardown included). For each input and
# filter it times `-k auto`, `-k cpu` and each GPU variant that can run the
# job, best of ROUNDS (default 5) process wall times, interleaved round by
# round. Inputs: one 12-megapixel JPEG (RGB u8, written as PNG), the same
# image as a 16-bit PNG (to PNG) and as a float PFM (to PFM; the portable
# build's OpenCV has no TIFF). Filters:
# edge, gaussian:sigma=3, a dense 31x31, gaussian:sigma=20.
# Prints one line a job: auto's time and choice, cpu's, the best GPU
# variant's, and auto against the better of cpu and that (the target is at
# most 1.10). Then `bench` of the cpu paths on this machine's cores, which
# the CPU side of auto's cost model is calibrated from. JSON lines and the
# bench CSV are left under $OUT (one-image-json.tgz, cpu-paths.csv) (or a temporary folder).
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=${OUT:-$work}
mkdir -p "$out"
mkdir -p "$work/bin"
tar xzf .carry/binaries.tgz -C "$work/bin" cudaconv
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
bin=$work/bin/cudaconv
rounds=${ROUNDS:-5}
gpu_variants=(fast fast-separable separable fft)

echo "== one-image $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, best of $rounds"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || true
python3 scripts/gpu/make-batch-inputs.py "$work" 1 1 .carry/rocket-4000x3000.jpg
# The same pixels as 16-bit (x257) and as float (/255), made by cudaconv.
"$bin" "$work/in/img000.jpg" -f 1x1:257 --depth u16 -o "$work/u16.png" -q
"$bin" "$work/in/img000.jpg" -f 1x1:0.00392156862745098 --depth f32 -o "$work/f32.pfm" -q
mkdir -p "$work/json"
declare -A input=([u8]="$work/in/img000.jpg" [u16]="$work/u16.png" [f32]="$work/f32.pfm")
declare -A ext=([u8]=png [u16]=png [f32]=pfm)
declare -A filter=([edge]=edge [sigma3]=gaussian:sigma=3 [dense31]="$work/dense31.txt"
                   [sigma20]=gaussian:sigma=20)

# One process: prints its wall seconds, or "-" where the variant refused.
run() {  # run DEPTH FILTER KERNEL
  local target=$work/out.${ext[$1]} start=$EPOCHREALTIME
  rm -f "$target"
  if "$bin" "${input[$1]}" -f "${filter[$2]}" -k "$3" -o "$target" -q \
      --json "$work/json/$1-$2-$3.jsonl" --overwrite 2>"$work/err"; then
    awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.3f", b - a}'
  else
    # A refusal is expected (a variant that cannot run the job); say others.
    grep -q "cannot run this job" "$work/err" || echo "one-image: $*: $(head -1 "$work/err")" >&2
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
    choice=$(cat "$work/json/$depth-$f-auto.jsonl" 2>/dev/null | grep -o '"variant":"[^"]*"' | head -1 | cut -d'"' -f4 || true)
    path=$(cat "$work/json/$depth-$f-cpu.jsonl" 2>/dev/null | grep -o '"path":"[^"]*"' | head -1 | cut -d'"' -f4 || true)
    ratio=$(awk -v a="$auto" -v c="$cpu" -v g="${gpu:-1e9}" \
      'BEGIN {b = c < g ? c : g; printf "%.2f", a / b}')
    printf '%-5s %-8s %-22s %-18s %-24s %s\n' "$depth" "$f" "$auto ($choice)" "$cpu (${path:-?})" \
      "${gpu:--} (${gpu_name:--})" "$ratio"
    unset walls
  done
done

tar czf "$out/one-image-json.tgz" -C "$work" json

echo "== cpu on $(nproc) cores (bench, median of 5; the path is cpu_paths_by_cost's pick)"
"$bin" bench --size 4000x3000x3,4000x3000x1 --depth u8,u16,f32 \
  -f edge,box:5,gaussian:sigma=1,gaussian:sigma=3,gaussian:sigma=20,random:5,random:7,random:15,random:31 \
  -k cpu --no-verify --warmup 1 --repeat 5 \
  --csv "$out/cpu-paths.csv" --overwrite
