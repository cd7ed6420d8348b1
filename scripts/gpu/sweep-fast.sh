#!/usr/bin/env bash
# Builds cudaconv once per tuning point of kernels/fast/fast.cu and
# kernels/fast/fast_strips.cu (their CUDACONV_FAST_* and CUDACONV_STRIPS_*
# macros), for one device call that benches them side by side
# (scripts/gpu/run-sweep.sh there). Needs the gpu build (build.sh) first;
# each point recompiles only those two files (or those named in
# SWEEP_SOURCES, e.g. SWEEP_SOURCES=fast/fast_strips) and relinks.
#   scripts/gpu/sweep-fast.sh NAME="-DCUDACONV_FAST_F32_ROWS=4 ..." ...
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/cuda-env.sh
work=$(mktemp -d)
read -r -a sources <<<"${SWEEP_SOURCES:-fast/fast fast/fast_strips}"
flags=$(grep -A4 "^build CMakeFiles/cudaconv_kernels.dir/kernels/fast/fast.cu.o" build/gpu/build.ninja |
        sed -n 's/^  \(DEFINES\|FLAGS\|INCLUDES\) = //p' | tr '\n' ' ')
# The executable's link line, with the kernels' library swapped for the copy.
link=$(cd build/gpu && ninja -t commands cudaconv | tail -1 | sed 's/^: && //; s/ && :$//')
mkdir -p .carry/sweep
for point in "$@"; do
  name=${point%%=*} defines=${point#*=}
  cp build/gpu/libcudaconv_kernels.a "$work/lib.a"
  objects=() compiles=()
  for source in "${sources[@]}"; do
    objects+=("CMakeFiles/cudaconv_kernels.dir/kernels/$source.cu.o")
    mkdir -p "$work/$(dirname "${objects[-1]}")"
    # shellcheck disable=SC2086  # flags are words
    nvcc $flags $defines -c "kernels/$source.cu" -o "$work/${objects[-1]}" &
    compiles+=($!)
  done
  for pid in "${compiles[@]}"; do wait "$pid"; done  # each, so that a failed compile stops here
  (cd "$work" && ar r lib.a "${objects[@]}")
  command=${link//libcudaconv_kernels.a/$work/lib.a}
  (cd build/gpu && eval "${command/-o cudaconv /-o $work/cudaconv-$name }" >/dev/null)
  strip "$work/cudaconv-$name"  # the carry holds 64 MiB
  gzip -c "$work/cudaconv-$name" >".carry/sweep/cudaconv-$name.gz"
  echo "sweep-fast: $name ($defines) $(md5sum <"$work/cudaconv-$name" | cut -c1-8)"
done
rm -rf "$work"
