#!/usr/bin/env bash
# Runs HERE, after scripts/gpu/build.sh and before a kernel change: keeps
# the cudaconv just built as .carry/baseline.gz (stripped, about 12 MB
# packed), so that scripts/gpu/ab.sh can time it beside the next build in
# one device call. The carry holds both: 37 MB of binaries plus this, under
# its 64 MiB.
set -euo pipefail
cd "$(dirname "$0")/../.."
[[ -f .carry/binaries.tgz ]] || { echo "save-baseline: run scripts/gpu/build.sh first" >&2; exit 1; }
staging=$(mktemp -d)
trap 'rm -rf "$staging"' EXIT
tar xzf .carry/binaries.tgz -C "$staging" cudaconv
gzip -c "$staging/cudaconv" >.carry/baseline.gz
echo "save-baseline: .carry/baseline.gz from $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (with uncommitted changes)')"
