#!/usr/bin/env bash
# Runs ON THE GPU MACHINE, from the repository root, after scripts/gpu/build.sh
# made .carry/ here: Nsight Compute's figures (speed of light, memory, occupancy,
# warp stalls) for one kernel launch of each job below, the ones issue 5 sets
# targets for. Clocks are left as the card runs them (--clock-control none), so
# the durations compare with `cudaconv bench`. Full reports go to $OUT; the
# lines that say what limits each kernel are printed last.
#
#   scripts/gpu/profile.sh                      # the default jobs
#   scripts/gpu/profile.sh "4000x3000x1 f32 gaussian:3 fast-separable" ...
set -euo pipefail
cd "$(dirname "$0")/../.."
final=${OUT:-gpu-out}
mkdir -p "$final"
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
tar xzf .carry/binaries.tgz -C "$bin"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)

jobs=("$@")
if [[ ${#jobs[@]} -eq 0 ]]; then
  jobs=("4000x3000x3 u8 edge fast"
        "4000x3000x1 f32 random:3 fast"
        "4000x3000x1 f32 random:15 fast"
        "4000x3000x3 u8 gaussian:sigma=5 fast-separable")
fi
# Each variant's main kernel, as ncu names it.
declare -A kernel_of=([fast]="regex:fast_kernel|strips_kernel|dense_mma_kernel|walk_kernel|registers_kernel" [fast-separable]="regex:fast_separable_kernel|separable_mma_kernel"
                      [separable]=regex:separable [fft]=regex:. [smem]=regex:smem)
for job in "${jobs[@]}"; do
  read -r size depth filter variant <<<"$job"
  name=$(echo "$size-$depth-$filter-$variant" | tr ':=,' '---')
  "$ncu" --clock-control none --kernel-name "${kernel_of[$variant]:-regex:.}" \
    --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
    --section WarpStateStats --section SchedulerStats --section LaunchStats \
    --section ComputeWorkloadAnalysis --section SourceCounters \
    "$bin/cudaconv" bench --size "$size" --depth "$depth" -f "$filter" -k "$variant" \
    --warmup 2 --repeat 1 --no-verify --timing launch >"$final/ncu-$name.txt" 2>&1 || echo "ncu failed on $job"
  echo "== $job"
  grep -E "^ +(Duration|DRAM Throughput|Memory Throughput|L1/TEX Hit Rate|L2 Hit Rate|Compute \(SM\) Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per Thread|Block Limit Registers|Issued Warp Per Scheduler|No Eligible|Warp Cycles Per Issued Instruction|Executed Ipc Active|Waves Per SM|Mem Busy|Max Bandwidth|L1/TEX Cache Throughput|L2 Cache Throughput|DRAM Bandwidth)" \
    "$final/ncu-$name.txt" | sed 's/  */ /g' || true
  # The stall reasons ncu names in its advice.
  grep -E "stall|Stall" "$final/ncu-$name.txt" | head -4 | cut -c1-300 || true
done
