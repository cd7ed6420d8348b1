#!/usr/bin/env bash
# Installs what is missing, builds everything with the dev preset and runs
# the whole test suite (CPU tests; GPU tests skip visibly without a device).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
source scripts/cuda-env.sh
cmake --preset dev >/dev/null
cmake --build --preset dev
ctest --preset dev
