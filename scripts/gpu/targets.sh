#!/usr/bin/env bash
# Runs ON THE GPU MACHINE, from the repository root, after scripts/gpu/build.sh
# made .carry/ here: issue 5's target jobs on `fast` (and fast-separable for
# the Gaussian), timed both ways `cudaconv bench --timing` offers, with NPP
# from ../shared/peers timed both ways too, and a plain copy of the same
# bytes (scripts/gpu/copy_reference.cu), in one call. Every output is
# verified. Prints the tables last; logs under $OUT (or ./gpu-out).
#   device: each launch queued behind a held stream, the device's time alone;
#   launch: events around each launch as the host submits it (the peer
#           program's own way, the host's launch latency included).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
final=${OUT:-gpu-out}
out=$(mktemp -d)  # packed into one archive under $final at the end
mkdir -p "$final"
bin=$(mktemp -d)
tar xzf .carry/binaries.tgz -C "$bin" cudaconv
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
peers=.carry/peers
"$nvcc" -O3 -std=c++17 -arch=sm_90 "$peers/npp_bench.cu" -o "$bin/npp_bench" \
  -lnppif -lnppisu -lnppc >"$out/npp-build.log" 2>&1 &
"$nvcc" -O3 -std=c++17 -arch=sm_90 -I. -I"$peers" scripts/gpu/npp_held.cu kernels/runtime/stream_hold.cu \
  -o "$bin/npp_held" -lnppif -lnppisu -lnppc >"$out/npp-held-build.log" 2>&1 &
"$nvcc" -O3 -std=c++17 -arch=sm_90 -I. scripts/gpu/copy_reference.cu kernels/runtime/stream_hold.cu \
  -o "$bin/copy_reference" >"$out/copy-reference-build.log" 2>&1 &
wait

for timing in device launch; do
  "$bin/cudaconv" bench --size 4000x3000x3 --depth u8 -f edge -k fast --timing "$timing" \
    >"$out/rgb-edge-$timing.log" 2>&1
  "$bin/cudaconv" bench --size 4000x3000x3 --depth u8 -f gaussian:sigma=5 -k fast-separable \
    --timing "$timing" >"$out/rgb-gaussian-$timing.log" 2>&1
  "$bin/cudaconv" bench --size 4000x3000x1 --depth f32 -f random:3,random:5,random:7,random:15,random:31 \
    -k fast --timing "$timing" >"$out/gray-$timing.log" 2>&1
  # Small images, where the host's launch latency is most of the time.
  "$bin/cudaconv" bench --size 780x585,2000x1000 --depth u8 -f edge -k fast --timing "$timing" \
    >"$out/small-$timing.log" 2>&1
done
"$bin/npp_bench" >"$out/npp-launch.log" 2>&1
"$bin/npp_held" >"$out/npp-device.log" 2>&1
"$bin/copy_reference" >"$out/copy-reference.log" 2>&1

for timing in device launch; do
  echo "==== cudaconv bench --timing $timing"
  for f in rgb-edge rgb-gaussian gray small; do
    sed -n '/median/,$p' "$out/$f-$timing.log" | grep -v '^$' | grep -v "checked against"
  done
  echo "==== NPP, timed the $timing way"
  cat "$out/npp-$timing.log"
done
echo "==== a plain copy of the same bytes, timed the device way (scripts/gpu/copy_reference.cu)"
cat "$out/copy-reference.log"
echo "==== builds"; tail -n 3 "$out"/npp-build.log "$out"/npp-held-build.log "$out"/copy-reference-build.log
tar czf "$final/targets-logs.tgz" -C "$out" .
