#!/usr/bin/env bash
# Runs ON THE GPU MACHINE, from the repository root, after scripts/gpu/build.sh
# made .carry/ here: the GPU tests of every variant against cpu-ref, the CLI
# tests, the four compute-sanitizer tools, and a short timing of every
# variant on a 4000x3000 RGB image with the edge filter. Logs go to $OUT
# (or ./gpu-out), a summary is printed last. See docs/GPU-TESTING.md.
# PARTS chooses what runs, for calls shorter than the device tool's limit
# per command: "tests" (header check, unit, CLI, layer against NumPy),
# "sanitizers", "timing" (every variant's time, bench, the targets);
# default all three.
set -uo pipefail
cd "$(dirname "$0")/../.."
# Logs in a work folder, packed into one archive under $OUT at the end (the
# device tool returns at most 8 files).
final=${OUT:-gpu-out}
out=$(mktemp -d)
mkdir -p "$final"
# build.sh packed the binaries; the sample image and peers lie beside them.
bin=$(mktemp -d)
tar xzf .carry/binaries.tgz -C "$bin"
cp .carry/rocket-4000x3000.jpg "$bin/"
[[ -d .carry/peers ]] && cp -r .carry/peers "$bin/"

# cuDNN 9 is only inside the Python environment there (GPU.md).
for d in /opt/torch/.venv/lib/python3*/site-packages/nvidia/cudnn/lib; do
  [[ -d $d ]] && export LD_LIBRARY_PATH=$d:${LD_LIBRARY_PATH:-}
done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CUDACONV_BINARY=$bin/cudaconv CUDACONV_SOURCE_DIR=$PWD

summary=()
timing="$out/timing.txt"
parts=" ${PARTS:-tests sanitizers timing} "
part() { [[ $parts == *" $1 "* ]]; }
step() {  # step NAME COMMAND...: runs it, logs to $out/NAME.log, records the verdict
  local name=$1; shift
  local start=$SECONDS
  if "$@" >"$out/$name.log" 2>&1; then
    summary+=("PASS  $name ($((SECONDS - start)) s)")
  else
    summary+=("FAIL  $name ($((SECONDS - start)) s, exit $?): see $name.log")
  fi
}

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv >"$out/gpu.txt" 2>&1
"$bin/cudaconv" list devices >>"$out/gpu.txt" 2>&1
"$bin/cudaconv" list kernels >>"$out/gpu.txt" 2>&1

if part tests; then
# kernels/codecs/nvjpeg_api.hpp against the real nvjpeg.h, which only this
# machine has: compiles, or names the declaration that drifted.
step nvjpeg-header g++ -std=c++17 -fsyntax-only -I. -isystem /usr/local/cuda/include \
  scripts/gpu/nvjpeg_header_check.cpp
step unit-tests "$bin/cudaconv_unit_tests" --durations yes
step cli-tests "$bin/cudaconv_cli_tests"
# A convolution layer on every variant against applyConv2d in NumPy (the
# system python3 there has numpy).
step layer-numpy python3 tests/layer/test_apply_conv2d.py --cudaconv "$bin/cudaconv" \
  --variants cpu-ref,cpu,cudnn,mma
step layer-numpy-tf32 python3 tests/layer/test_apply_conv2d.py --cudaconv "$bin/cudaconv" \
  --variants cudnn,mma --allow-tf32
fi

if part sanitizers; then
for tool in memcheck racecheck initcheck synccheck; do
  extra=()
  [[ $tool == memcheck ]] && extra=(--leak-check full)
  step "sanitizer-$tool" compute-sanitizer --tool "$tool" "${extra[@]}" --error-exitcode 1 \
    "$bin/cudaconv_unit_tests" "[gpu-quick]"
done

# A batch whose JPEGs the GPU decodes (--decoder gpu: nvJPEG into pooled
# device buffers, read by the run in place of an upload), under memcheck.
decode_in=$(mktemp -d)
for i in 1 2 3; do cp images/rocket.jpg "$decode_in/rocket$i.jpg"; done
cp images/camera.png "$decode_in/"
# CUDACONV_TEARDOWN: the batch frees what it holds before exit, for the leak check.
step sanitizer-gpu-decode env CUDACONV_TEARDOWN=1 \
  compute-sanitizer --tool memcheck --leak-check full --error-exitcode 1 \
  "$bin/cudaconv" "$decode_in" -f edge -k fast --decoder gpu -q -o "$decode_in/out/"
# And one whose JPEG outputs the GPU encodes (nvJPEG, kernels/codecs/jpeg_encoder.hpp).
step sanitizer-gpu-encode compute-sanitizer --tool memcheck --leak-check full --error-exitcode 1 \
  "$bin/cudaconv" "$decode_in" -f edge -k fast --encoder gpu -q -o "$decode_in/jpeg/{stem}.jpg"
# And both: the encoder on the decoder's nvJPEG handle (kernels/codecs/nvjpeg_handle.hpp).
step sanitizer-gpu-codecs env CUDACONV_TEARDOWN=1 \
  compute-sanitizer --tool memcheck --leak-check full --error-exitcode 1 \
  "$bin/cudaconv" "$decode_in" -f edge -k fast --decoder gpu --encoder gpu -q \
  -o "$decode_in/both/{stem}.jpg"
fi

if part timing; then

# Kernel time of every variant: 4000x3000 RGB u8, edge 3x3, 3 warm-ups,
# median of 20 (CUDA events), output checked against cpu-ref's.
img=$bin/rocket-4000x3000.jpg
"$bin/cudaconv" "$img" -f edge -k cpu-ref -q -o "$out/edge-cpu-ref.png"
: >"$timing"
for k in $("$bin/cudaconv" list kernels | awk '$2 == "CUDA" {print $1}'); do
  "$bin/cudaconv" "$img" -f edge -k "$k" --repeat 20 --warmup 3 -q \
    -o "$out/edge-$k.png" --json "$out/timing-$k.json" >>"$out/timing-$k.log" 2>&1 || {
    if grep -q "cannot run this job" "$out/timing-$k.log"; then
      echo "$k: not supported: $(tail -1 "$out/timing-$k.log" | sed 's/.*this job: //')" >>"$timing"
    else
      echo "$k: FAILED: $(tail -1 "$out/timing-$k.log")" >>"$timing"
    fi
    continue; }
  python3 - "$out" "$k" >>"$timing" <<'PY'
import json, sys
out, k = sys.argv[1], sys.argv[2]
r = json.loads(open(f"{out}/timing-{k}.json").readline())
f = r["filter_runs"]
print(f"{k:<12} filter median {f['median_ms']*1000:9.1f} us  min {f['min_ms']*1000:9.1f}  "
      f"max {f['max_ms']*1000:9.1f}  {f['gb_per_s']:7.1f} GB/s  upload {r['timings_ms']['upload']:.2f} ms  "
      f"download {r['timings_ms']['download']:.2f} ms")
PY
  # Pixels, not bytes: a CUDA variant's PNG is compressed on the GPU
  # (kernels/codecs/png_deflate.hpp), cpu-ref's by the CPU writer.
  "$bin/cudaconv" compare "$out/edge-$k.png" "$out/edge-cpu-ref.png" -q &&
    echo "    output identical to cpu-ref's, pixel for pixel" >>"$timing" ||
    echo "    output differs from cpu-ref's (see the unit tests for the tolerance check)" >>"$timing"
done
rm -f "$out"/edge-*.png

# Every CUDA variant on issue 5's target jobs, the ladder from naive up
# (`cudaconv bench`, every output verified).
cuda_variants=$("$bin/cudaconv" list kernels | awk '$2 == "CUDA" {print $1}' | paste -sd,)
step bench-rgb "$bin/cudaconv" bench --size 4000x3000x3 --depth u8 -f edge,gaussian:5,gaussian:sigma=5 \
  -k "$cuda_variants" --json "$out/bench-rgb.json"
step bench-gray "$bin/cudaconv" bench --size 4000x3000x1 --depth f32 \
  -f random:3,random:5,random:7,random:15,random:31 -k "$cuda_variants" --json "$out/bench-gray.json"
# Issue 5's target jobs on fast both ways bench --timing offers, and NPP
# both ways, side by side (scripts/gpu/targets.sh; its archive joins $final).
step targets env OUT="$final" scripts/gpu/targets.sh
fi

echo "== GPU"; cat "$out/gpu.txt"
exec 2>/dev/null  # the parts not run left no logs to read
echo "== unit tests (GPU part)"; grep -E "passed|failed|not supported|SKIPPED|test cases" "$out/unit-tests.log" | tail -40
echo "== layer against NumPy"; grep -c "^ok" "$out/layer-numpy.log"; grep "^FAIL" "$out/layer-numpy.log"
echo "== sanitizers"; for t in memcheck racecheck initcheck synccheck; do
  echo "$t: $(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$out/sanitizer-$t.log" | tail -1)"; done
echo "memcheck, a batch decoded on the GPU: $(grep "ERROR SUMMARY" "$out/sanitizer-gpu-decode.log" | tail -1)"
echo "memcheck, a batch encoded to JPEG on the GPU: $(grep "ERROR SUMMARY" "$out/sanitizer-gpu-encode.log" | tail -1)"
echo "memcheck, a batch decoded and encoded on the GPU: $(grep "ERROR SUMMARY" "$out/sanitizer-gpu-codecs.log" | tail -1)"
echo "== nvJPEG's files against libjpeg's"; grep -h "GPU vs CPU\|nvJPEG vs libjpeg" "$out"/unit-tests.log "$out"/cli-tests.log
echo "== timing, 4000x3000 RGB u8, edge 3x3"; cat "$timing"
echo "== bench (4000x3000 RGB u8)"; sed -n '/median/,$p' "$out/bench-rgb.log" | head -60
echo "== bench (4000x3000 gray f32)"; sed -n '/median/,$p' "$out/bench-gray.log" | head -80
echo "== issue 5's targets, both timings, NPP beside them"; sed -n '/^==== /,$p' "$out/targets.log"
echo "== failures"; grep -h -A8 "FAILED" "$out"/unit-tests.log "$out"/cli-tests.log | head -60
echo "== CLI tests"; tail -3 "$out/cli-tests.log"
echo "== summary"; printf '%s\n' "${summary[@]}"
tar czf "$final/gpu-logs.tgz" -C "$out" .
