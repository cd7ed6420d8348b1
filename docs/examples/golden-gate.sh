#!/usr/bin/env bash
# A CI gate on golden images: filters every image of a folder with cudaconv
# and fails when any output strays from its golden beyond a tolerance.
#
#   golden-gate.sh INPUTS GOLDENS OUT [cudaconv options...]
#   e.g. golden-gate.sh photos/ golden/ out/ -f gaussian:sigma=2 --border reflect
#
# Writes OUT/<name>.png for every image in INPUTS, then runs
#   cudaconv compare OUT GOLDENS --max-abs 1 --diff OUT.diff --overwrite
# which matches files by relative path, reports missing and extra ones and
# writes a heat map for each file that differs. Exit status: 0 all within
# tolerance, 1 some output differs or is missing, 2 an error.
# First run (or after an intended change): set UPDATE=1 to write the goldens
# from cpu-ref instead, and review them before committing.
# CUDACONV names the binary (default: cudaconv on PATH); TOLERANCE the
# compare limits (default "--max-abs 1", docs/SPEC.md's bound for 8/16-bit).
set -euo pipefail
(($# >= 3)) || { sed -n '2,16p' "$0" >&2; exit 2; }
inputs=$1 goldens=$2 out=${3%/}
shift 3
cudaconv=${CUDACONV:-cudaconv}
read -r -a tolerance <<<"${TOLERANCE:---max-abs 1}"

if [[ ${UPDATE:-0} == 1 ]]; then
  target=$goldens kernel=(-k cpu-ref)  # goldens come from the oracle
else
  target=$out kernel=()
fi
mkdir -p "$target"

# One cudaconv per image: a failing input stops the gate with its message.
# --overwrite: each run replaces the previous run's outputs. --decoder cpu:
# JPEG inputs decoded by libjpeg-turbo everywhere, so a GPU runner's
# outputs match the goldens to the filter's own bound (docs/CI.md).
shopt -s nullglob nocaseglob
images=("$inputs"/*.{png,jpg,jpeg,tif,tiff,pfm})
((${#images[@]})) || { echo "golden-gate: no images in $inputs" >&2; exit 2; }
for image in "${images[@]}"; do
  name=$(basename "${image%.*}")
  "$cudaconv" "$image" "$@" "${kernel[@]}" --decoder cpu -q --overwrite -o "$target/$name.png"
done

if [[ ${UPDATE:-0} == 1 ]]; then
  echo "golden-gate: wrote ${#images[@]} goldens to $goldens; review them, then commit"
  exit 0
fi
# Heat maps go to a folder beside OUT, not in it, where the next run's
# compare would meet them as extra files; --overwrite replaces the previous
# run's.
exec "$cudaconv" compare "$out" "$goldens" "${tolerance[@]}" --diff "$out.diff" --overwrite
