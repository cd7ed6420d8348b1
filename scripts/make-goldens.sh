#!/usr/bin/env bash
# Regenerates the golden outputs listed in images/golden/MANIFEST with
# cpu-ref, the oracle. Refuses to overwrite an existing golden unless
# --force is given: a changed golden is a changed contract, to be reviewed.
set -euo pipefail
cd "$(dirname "$0")/.."
force=0
[[ ${1:-} == --force ]] && force=1
bin=${CUDACONV:-build/dev/cudaconv}
[[ -x $bin ]] || { echo "make-goldens: build first (scripts/test.sh), or set CUDACONV" >&2; exit 2; }

while IFS=$'\t' read -r golden input args; do
  [[ -z $golden || $golden == \#* ]] && continue
  if [[ -e $golden && $force -eq 0 ]]; then
    echo "make-goldens: $golden exists; pass --force to overwrite" >&2
    continue
  fi
  # shellcheck disable=SC2086  # the arguments are words by design
  "$bin" "$input" $args -k cpu-ref -q -o "$golden"
  echo "make-goldens: wrote $golden"
done <images/golden/MANIFEST
