#!/usr/bin/env bash
# Regenerates the golden outputs listed in images/golden/MANIFEST with
# cpu-ref, the oracle, and checks each new one against the manifest's
# tolerance at once. Refuses to overwrite an existing golden unless --force
# is given: a changed golden is a changed contract, to be reviewed (then run
# the tests: test_goldens checks every golden against cv::filter2D).
#
#   scripts/make-goldens.sh [--force] [GOLDEN...]   # default: every golden
set -euo pipefail
cd "$(dirname "$0")/.."
force=0
if [[ ${1:-} == --force ]]; then
  force=1
  shift
fi
bin=${CUDACONV:-build/dev/cudaconv}
[[ -x $bin ]] || { echo "make-goldens: build first (scripts/test.sh), or set CUDACONV" >&2; exit 2; }

wanted() {  # no names given means all of them
  (($# == 1)) && return 0
  local name=$1
  shift
  for n in "$@"; do [[ $n == "$name" ]] && return 0; done
  return 1
}

written=0 kept=0
while IFS=$'\t' read -r golden input tolerance args; do
  [[ -z $golden || $golden == \#* ]] && continue
  wanted "$golden" "$@" || continue
  target=images/golden/$golden
  if [[ -e $target && $force -eq 0 ]]; then
    echo "make-goldens: $target exists; pass --force to overwrite" >&2
    kept=$((kept + 1))
    continue
  fi
  # shellcheck disable=SC2086  # the arguments are words by design
  "$bin" "images/$input" $args -k cpu-ref -q -o "$target"
  # shellcheck disable=SC2086
  "$bin" compare "$target" "$target" $tolerance >/dev/null  # readable, limits well-formed
  echo "make-goldens: wrote $target"
  written=$((written + 1))
done <images/golden/MANIFEST
echo "make-goldens: $written written, $kept kept" >&2
