#!/usr/bin/env bash
# Runs ON THE GPU MACHINE, from the repository root, after scripts/gpu/build.sh
# made .carry/ here: issue 34's codec measurement, side by side in one run.
#   1. 200 distinct 4000x3000 JPEGs (make-batch-inputs.py, as batch-bench.sh);
#   2. cudaconv over them, -f edge and a dense 31x31 filter, to JPEG and to
#      PNG, with the decoder and encoder on the GPU, the decoder on the CPU,
#      and both on the CPU, interleaved, ROUNDS times
#      (default 2): images/s, peak RSS (/usr/bin/time -v) and peak device
#      memory (nvidia-smi, sampled every 50 ms);
#   3. the peers, on the same folder: nvJPEG's batched decode alone
#      (../shared/peers/nvjpeg_batch.cu, built here with nvcc) and the
#      torchvision script (decode_jpeg and encode_jpeg on the GPU, conv2d)
#      with the torch environment's python;
#   4. the rate at which the disk takes the same bytes (write-rate.py: the
#      outputs of an edge batch to JPEG and to PNG, written again);
#   5. 50-megapixel images (8660x5773, 24 of them): -f edge to PNG with
#      each decoder, images/s, peak RSS and device memory.
# Logs go to $OUT (or ./gpu-out).
set -euo pipefail
cd "$(dirname "$0")/../.."
final=${OUT:-gpu-out}
mkdir -p "$final"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin"
tar xzf .carry/binaries.tgz -C "$work/bin" cudaconv
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
cudaconv=$work/bin/cudaconv
images=${BATCH_IMAGES:-200} rounds=${ROUNDS:-2}
log=$final/codec-bench.log
: >"$log"
say() { echo "$*" | tee -a "$log"; }

say "== codec-bench $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | tee -a "$log" || true
python3 scripts/gpu/make-batch-inputs.py "$work" "$images" "$(nproc)" .carry/rocket-4000x3000.jpg
say "inputs: $(ls "$work/in" | wc -l) JPEGs of 4000x3000, $(du -sh "$work/in" | cut -f1)"

# One cudaconv run: "images/s rss_mb device_mb" (device memory: the peak
# of nvidia-smi's used memory during the run, less what was used before).
measure() {  # measure COUNT ARGS...
  local count=$1; shift
  local out=$work/out
  rm -rf "$out"; mkdir -p "$out"
  local idle; idle=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1)
  nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 50 >"$work/smi" 2>/dev/null &
  local smi=$!
  local start=$EPOCHREALTIME
  /usr/bin/time -v -o "$work/time" "$cudaconv" "$@" -q >"$work/stdout" 2>"$work/stderr" ||
    say "cudaconv $*: exit $? ($(head -2 "$work/stderr"))"
  local end=$EPOCHREALTIME
  kill "$smi" 2>/dev/null; wait "$smi" 2>/dev/null || true
  local rss; rss=$(awk -F': ' '/Maximum resident/ {print int($2 / 1024)}' "$work/time")
  local peak; peak=$(sort -n "$work/smi" | tail -1)
  awk -v n="$count" -v a="$start" -v b="$end" -v r="$rss" -v p="${peak:-0}" -v i="$idle" \
    'BEGIN {printf "%.1f %d %d\n", n / (b - a), r, p - i}'
}

"$cudaconv" $(ls "$work"/in/*.jpg | head -4) -f edge -o "$work/warm/" -q  # page cache, driver
say ""
say "cudaconv, $images 4000x3000 JPEGs, $rounds rounds interleaved: images/s, peak RSS MB, peak device MB"
for job in edge:jpg edge:png dense31:jpg dense31:png; do
  filter=${job%%:*} ext=${job##*:}
  [[ $filter == dense31 ]] && filter=$work/dense31.txt
  for ((r = 0; r < rounds; ++r)); do
    # Both codecs on the GPU (the encoder's default), the decoder on the
    # CPU, and both on the CPU.
    order=("gpu auto" "cpu auto" "cpu cpu")
    ((r % 2)) && order=("cpu cpu" "cpu auto" "gpu auto")
    for codecs in "${order[@]}"; do
      read -r decoder encoder <<<"$codecs"
      result=$(measure "$images" "$work/in" -f "$filter" --decoder "$decoder" --encoder "$encoder" \
        -o "$work/out/{stem}.$ext")
      say "  ${job/dense31/dense 31x31} --decoder $decoder --encoder $encoder: $result"
    done
  done
done
result=$(measure "$images" "$work/in" -f none -o "$work/out/{stem}.jpg")
say "  -f none to jpg (CPU codecs alone): $result"

say ""
say "the disk: a batch's outputs written again where they went (scripts/gpu/write-rate.py)"
for ext in jpg png; do
  rm -rf "$work/written"
  "$cudaconv" "$work/in" -f edge --decoder gpu -o "$work/written/{stem}.$ext" -q
  say "  edge to $ext:"
  python3 scripts/gpu/write-rate.py "$work/written" "$(nproc)" | tee -a "$log"
done
rm -rf "$work/written"

say ""
say "peers on the same folder:"
if [[ -f .carry/peers/nvjpeg_batch.cu ]] && command -v nvcc >/dev/null; then
  nvcc -O2 -std=c++17 -arch=sm_90 .carry/peers/nvjpeg_batch.cu -o "$work/nvjpeg_batch" -lnvjpeg &&
    "$work/nvjpeg_batch" "$work/in/img000.jpg" 200 50 2>&1 | tee -a "$log" || say "nvjpeg_batch failed"
else
  say "  (nvjpeg_batch: no .carry/peers/nvjpeg_batch.cu or nvcc)"
fi
torch_python=/opt/torch/.venv/bin/python
if [[ -f .carry/peers/torchvision_batch.py && -x $torch_python ]]; then
  "$torch_python" .carry/peers/torchvision_batch.py "$work/in" "$images" 32 2>&1 | tee -a "$log" ||
    say "torchvision_batch failed"
else
  say "  (torchvision_batch: no .carry/peers/torchvision_batch.py or $torch_python)"
fi

say ""
say "50-megapixel images (8660x5773), -f edge to PNG: images/s, peak RSS MB, peak device MB"
python3 - "$work" <<'PY'
import sys, cv2
work = sys.argv[1]
import os
os.makedirs(f"{work}/big", exist_ok=True)
base = cv2.resize(cv2.imread(f"{work}/in/img000.jpg"), (8660, 5773), interpolation=cv2.INTER_CUBIC)
for i in range(24):
    cv2.imwrite(f"{work}/big/big{i:02d}.jpg", cv2.convertScaleAbs(base, alpha=1.0, beta=i - 12),
                [cv2.IMWRITE_JPEG_QUALITY, 92])
PY
for decoder in gpu cpu; do
  result=$(measure 24 "$work/big" -f edge --decoder "$decoder" -o "$work/out/{stem}.png")
  say "  --decoder $decoder: $result"
done
